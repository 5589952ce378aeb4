import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { compareDbNames, indexAfter, sortDbNames } from "../../../src/core/db-updates/index.js";

const utf8Order = (a: string, b: string): number => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
const sign = (n: number): number => Math.sign(n);

describe("db name order (CouchDB's _all_dbs: raw, UTF-8 bytes)", () => {
  it("agrees with UTF-8 byte order for any strings, astral characters included", () => {
    // Well-formed strings only: a lone surrogate has no UTF-8 form (Buffer would replace it).
    const codePoint = fc
      .integer({ min: 0, max: 0x10ffff })
      .filter((c) => c < 0xd800 || c > 0xdfff)
      .map((c) => String.fromCodePoint(c));
    const name = fc.string({ unit: fc.oneof(fc.constantFrom("a", "z", "/", "_", "\uE000", "\uFFFF", "\u{1F600}", "\u{10000}"), codePoint) });
    fc.assert(fc.property(name, name, (a, b) => sign(compareDbNames(a, b)) === sign(utf8Order(a, b))));
  });

  it("JS's own < gets U+E000 vs an astral character wrong; this does not", () => {
    expect("\u{1F600}" < "\uE000").toBe(true);
    expect(compareDbNames("\u{1F600}", "\uE000")).toBeGreaterThan(0);
  });

  it("indexAfter finds the first name strictly after", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ maxLength: 3 })), fc.string({ maxLength: 3 }), (names, probe) => {
        const sorted = sortDbNames(names);
        const at = indexAfter(sorted, probe);
        expect(sorted.slice(0, at).every((n) => compareDbNames(n, probe) <= 0)).toBe(true);
        expect(sorted.slice(at).every((n) => compareDbNames(n, probe) > 0)).toBe(true);
      }),
    );
  });
});
