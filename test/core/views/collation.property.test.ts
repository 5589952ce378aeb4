/**
 * CouchDB's view collation: a total order over JSON consistent with the type
 * order, ICU for strings (the fast path agrees with the collator), and
 * UTF-8 byte order for doc ids. The expectations CouchDB's own tests and
 * docs list are here too; the real server's answers are in
 * test/adapters/memory/views-couchdb-replay.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareDocIds, compareStrings, compareViewKeys, compareRaw, rowCompareOf, type IndexRow } from "../../../src/core/views/index.js";

const sign = (n: number): number => Math.sign(n);

/** JSON values, with strings that exercise ICU: case, accents, ignorables, punctuation, astral characters. */
const trickyString = fc.string({ unit: fc.constantFrom("a", "A", "b", "B", "é", "e", "\u0301", "\u200B", "-", "_", " ", ".", "/", "0", "9", "z", "ß", "😀", "~", "$", "日") });
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -5, max: 5 }),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
    trickyString,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(trickyString, tie("value"), { maxKeys: 3 }),
  ),
})).value;

const typeRank = (v: unknown): number =>
  v === null ? 0 : v === false ? 1 : v === true ? 2 : typeof v === "number" ? 3 : typeof v === "string" ? 4 : Array.isArray(v) ? 5 : 6;

describe("view collation", () => {
  it("is antisymmetric, reflexive and consistent with the type order (null < false < true < numbers < strings < arrays < objects)", () => {
    fc.assert(
      fc.property(jsonValue, jsonValue, (a, b) => {
        expect(compareViewKeys(a, a)).toBe(0);
        expect(sign(compareViewKeys(a, b)) + sign(compareViewKeys(b, a))).toBe(0);
        if (typeRank(a) !== typeRank(b)) expect(sign(compareViewKeys(a, b))).toBe(sign(typeRank(a) - typeRank(b)));
      }),
    );
  });

  it("is transitive: sorting any list gives a sequence in order, pairwise", () => {
    fc.assert(
      fc.property(fc.array(jsonValue, { maxLength: 12 }), (values) => {
        const sorted = [...values].sort(compareViewKeys);
        for (let i = 0; i < sorted.length; i++)
          for (let j = i + 1; j < sorted.length; j++) expect(compareViewKeys(sorted[i], sorted[j])).toBeLessThanOrEqual(0);
      }),
    );
  });

  it("compares strings as ICU's root collator does, fast path included", () => {
    const icu = new Intl.Collator("en");
    const plain = fc.string({ unit: fc.constantFrom(" ", "-", ".", "/", "0", "5", "9", "a", "m", "z") });
    fc.assert(
      fc.property(fc.oneof(plain, trickyString), fc.oneof(plain, trickyString), (a, b) => {
        expect(sign(compareStrings(a, b))).toBe(sign(icu.compare(a, b)));
      }),
    );
  });

  it("orders CouchDB's documented collation example (docs/ddocs/views/collation.rst) as listed", () => {
    const listed: unknown[] = [
      null, false, true, 1, 2, 3.0, 4,
      "a", "A", "aa", "b", "B", "ba", "bb",
      ["a"], ["b"], ["b", "c"], ["b", "c", "a"], ["b", "d"], ["b", "d", "e"],
      { a: 1 }, { a: 2 }, { b: 1 }, { b: 2 }, { b: 2, a: 1 }, { b: 2, c: 2 },
    ];
    const shuffled = [...listed].reverse();
    expect(shuffled.sort(compareViewKeys)).toEqual(listed);
  });

  it("treats what ICU ignores as equal (CouchDB's collation test: c, c\\u200B, c\\u200B\\u200B) and uses case only to break ties", () => {
    expect(compareViewKeys("c", "c\u200B")).toBe(0);
    expect(compareViewKeys("c\u200B", "c\u200B\u200B")).toBe(0);
    expect(compareViewKeys("é", "e\u0301")).toBe(0);
    // "abc < Abc < ABC < abc1 < AbcZZZZZ" (the docs' key range example).
    const keys = ["abc", "Abc", "ABC", "abc1", "AbcZZZZZ"];
    expect([...keys].reverse().sort(compareViewKeys)).toEqual(keys);
  });

  it("does not depend on the process's locale (Intl.Collator('und') would)", () => {
    // Root/English order puts "ä" with "a"; Swedish would put it after "z".
    expect(compareViewKeys("ä", "b")).toBe(-1);
    expect(compareViewKeys("z", "ä")).toBe(1);
  });

  it("compares doc ids by UTF-8 bytes (Erlang binaries), astral characters included", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
        expect(sign(compareDocIds(a, b))).toBe(sign(Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"))));
      }),
    );
    expect(compareDocIds("\uFFFF", "😀")).toBe(-1);
  });

  it("sorts rows with equal keys by doc id, then by value in Erlang term order (CouchDB's duplicates)", () => {
    const compare = rowCompareOf(compareViewKeys);
    fc.assert(
      fc.property(fc.array(fc.record({ key: fc.constantFrom("c", "c\u200B", "C", 1), id: trickyString, value: jsonValue }), { maxLength: 20 }), (rows: IndexRow[]) => {
        const sorted = [...rows].sort(compare);
        for (let i = 1; i < sorted.length; i++) {
          const [a, b] = [sorted[i - 1]!, sorted[i]!];
          const byKey = compareViewKeys(a.key, b.key);
          expect(byKey).toBeLessThanOrEqual(0);
          if (byKey === 0) expect(compareDocIds(a.id, b.id)).toBeLessThanOrEqual(0);
          if (byKey === 0 && a.id === b.id && compareRaw(a.key, b.key) === 0) expect(compareRaw(a.value, b.value)).toBeLessThanOrEqual(0);
        }
      }),
    );
  });

  it("raw collation is Erlang's term order: numbers < atoms < objects < arrays < strings", () => {
    const ordered: unknown[] = [-1, 2, false, null, true, {}, { a: 1 }, [], [1], "A", "a"];
    expect([...ordered].reverse().sort(compareRaw)).toEqual(ordered);
  });
});
