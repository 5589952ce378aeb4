/**
 * `selectRange` (the rows `_all_docs` and `_all_dbs` select) against a plain
 * filter over the sorted list, for random ids (astral characters included,
 * where UTF-8 order and JS's `<` disagree), random keys (non-strings sort
 * before every id, as CouchDB's raw collation has it) and random options.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { selectRange, type KeyRange } from "../../../src/http/documents/key-range.js";
import { compareDocIds, compareRaw } from "../../../src/core/views/index.js";

/** `id` against `key` in raw collation: any non-string key sorts before every id. */
const idVersusKey = (id: string, key: unknown): number => (typeof key === "string" ? compareDocIds(id, key) : 1);

function plainSelection(sorted: readonly string[], range: KeyRange): { offset: number; rows: string[] } {
  const sign = range.descending ? -1 : 1;
  const ordered = range.descending ? [...sorted].reverse() : [...sorted];
  const afterStart = (id: string) => range.start === undefined || sign * idVersusKey(id, range.start.key) >= 0;
  const beforeEnd = (id: string) => {
    if (range.end === undefined) return true;
    const order = sign * idVersusKey(id, range.end.key);
    return range.inclusiveEnd ? order <= 0 : order < 0;
  };
  const first = ordered.findIndex(afterStart);
  const before = first < 0 ? ordered.length : first;
  const rows = ordered.filter((id) => afterStart(id) && beforeEnd(id)).slice(range.skip);
  return { offset: Math.min(ordered.length, before + range.skip), rows: range.limit === undefined ? rows : rows.slice(0, range.limit) };
}

const idArbitrary = fc.string({ unit: fc.constantFrom("a", "b", "c", "-", "é", "\u{1F600}", "\uFF21", "_"), maxLength: 4 });
const keyArbitrary = fc.oneof({ weight: 4, arbitrary: idArbitrary }, { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 1, true, [], {}) });
const rangeArbitrary: fc.Arbitrary<KeyRange> = fc.record({
  start: fc.option(keyArbitrary.map((key) => ({ key })), { nil: undefined }),
  end: fc.option(keyArbitrary.map((key) => ({ key })), { nil: undefined }),
  inclusiveEnd: fc.boolean(),
  descending: fc.boolean(),
  skip: fc.nat(5),
  limit: fc.option(fc.nat(5), { nil: undefined }),
});

describe("selectRange", () => {
  it("selects what a plain filter over the sorted ids selects, with CouchDB's offset", () => {
    fc.assert(
      fc.property(fc.uniqueArray(idArbitrary, { maxLength: 12 }), rangeArbitrary, (ids, range) => {
        const sorted = [...ids].sort(compareDocIds);
        expect(selectRange(sorted, sorted, range)).toEqual(plainSelection(sorted, range));
      }),
    );
  });

  it("sorts by UTF-8 bytes, not UTF-16 units (an astral character after U+FF21)", () => {
    expect(["\u{1F600}", "\uFF21"].sort(compareRaw)).toEqual(["\uFF21", "\u{1F600}"]);
    expect([1, "a", null, [], {}].sort(compareRaw)).toEqual([1, null, {}, [], "a"]);
  });

  it("matches CouchDB's offsets (fixture 44: descending from doc-c, skip 1)", () => {
    const ids = ["_design/d", "d1", "d2", "doc-b", "doc-batch", "doc-c"];
    const window = selectRange(ids, ids, { start: { key: "doc-c" }, inclusiveEnd: true, descending: true, skip: 1, limit: 2 });
    expect(window).toEqual({ offset: 1, rows: ["doc-batch", "doc-b"] });
  });
});
