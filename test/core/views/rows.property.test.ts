/**
 * Row selection and reduction against naive definitions: a range is the
 * rows between the bounds (filtered one by one), a reduce over a range is
 * the reduce of those rows, a group_level result is those rows grouped by
 * key prefix, a merge is a sort of the rows kept plus the rows added.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  builtinReducerOf,
  compareDocIds,
  compareViewKeys,
  mergeRows,
  rangesOf,
  reduceRows,
  rowCompareOf,
  selectMapRows,
  type GroupLevel,
  type IndexRow,
  type RangeQuery,
} from "../../../src/core/views/index.js";

const compare = rowCompareOf(compareViewKeys);

const keyArb = fc.oneof(
  fc.constantFrom(null, true, "a", "A", "b", "c", "c\u200B"),
  fc.integer({ min: 0, max: 4 }),
  fc.array(fc.constantFrom("x", "y", 1, 2), { minLength: 0, maxLength: 3 }),
);
const rowArb = fc.record({ key: keyArb, id: fc.constantFrom("d1", "d2", "D", "é", "_"), value: fc.integer({ min: -50, max: 50 }) });
const sortedRows = fc.array(rowArb, { maxLength: 40 }).map((rows) => [...rows].sort(compare) as IndexRow[]);

const boundArb = fc.option(fc.record({ key: keyArb, docId: fc.option(fc.constantFrom("d1", "D", "é"), { nil: undefined }) }), { nil: undefined });
const rangeArb = fc.record({ start: boundArb, end: boundArb, inclusiveEnd: fc.boolean(), descending: fc.boolean() });

/** Naively: is the row inside the range, in the query's direction? */
const inRange = (row: IndexRow, q: RangeQuery): boolean => {
  const vs = (key: unknown, docId: string | undefined, missing: number): number => compareViewKeys(row.key, key) || (docId === undefined ? missing : compareDocIds(row.id, docId));
  const dir = q.descending ? -1 : 1;
  // A bound without a doc id sits before (start) or after (inclusive end) every row of its key, in the direction of the query.
  if (q.start !== undefined && dir * vs(q.start.key, q.start.docId, dir) < 0) return false;
  if (q.end !== undefined) {
    const toEnd = dir * vs(q.end.key, q.end.docId, q.inclusiveEnd ? -dir : dir);
    if (q.inclusiveEnd ? toEnd > 0 : toEnd >= 0) return false;
  }
  return true;
};

const naiveRows = (rows: readonly IndexRow[], q: RangeQuery): IndexRow[] => (q.descending ? [...rows].reverse() : rows).filter((row) => inRange(row, q));

const sum = (rows: readonly IndexRow[]): number => rows.reduce((total, row) => total + (row.value as number), 0);

describe("view rows", () => {
  it("a range holds exactly the rows between its bounds, in the query's direction, with skip, limit and offset", () => {
    fc.assert(
      fc.property(sortedRows, rangeArb, fc.nat(5), fc.option(fc.nat(5), { nil: undefined }), (rows, range, skip, limit) => {
        const expected = naiveRows(rows, range);
        const selected = selectMapRows(rows, rangesOf(rows, { ...range, keys: undefined }, compareViewKeys), { descending: range.descending, skip, limit: limit ?? Infinity });
        expect(selected.rows).toEqual(expected.slice(skip, limit === undefined ? undefined : skip + limit));
        expect(selected.totalRows).toBe(rows.length);
        if (selected.rows.length > 0) {
          const ordered = range.descending ? [...rows].reverse() : rows;
          expect(selected.offset).toBe(ordered.indexOf(selected.rows[0]!));
        }
      }),
    );
  });

  it("a reduce over a range equals the reduce of the rows in it (_sum, _count, _stats)", () => {
    fc.assert(
      fc.property(sortedRows, rangeArb, (rows, range) => {
        const selected = naiveRows(rows, range);
        const ranges = rangesOf(rows, { ...range, keys: undefined }, compareViewKeys);
        const query = { groupLevel: 0 as GroupLevel, descending: range.descending, skip: 0, limit: Infinity };
        const run = (name: string) => reduceRows(rows, ranges, query, builtinReducerOf(name)!, compareViewKeys);
        if (selected.length === 0) {
          expect(run("_sum")).toEqual([]);
          return;
        }
        const values = selected.map((row) => row.value as number);
        expect(run("_sum")).toEqual([{ key: null, value: sum(selected) }]);
        expect(run("_count")).toEqual([{ key: null, value: selected.length }]);
        expect(run("_stats")).toEqual([
          { key: null, value: { sum: sum(selected), count: values.length, min: Math.min(...values), max: Math.max(...values), sumsqr: values.reduce((t, v) => t + v * v, 0) } },
        ]);
      }),
    );
  });

  it("group_level N equals grouping the rows by their keys' first N elements (other keys exactly)", () => {
    fc.assert(
      fc.property(sortedRows, rangeArb, fc.oneof(fc.constant("exact" as const), fc.integer({ min: 1, max: 3 })), (rows, range, level) => {
        const groupKey = (key: unknown): unknown => (level === "exact" || !Array.isArray(key) || key.length === 0 ? key : key.slice(0, level));
        const expected: { key: unknown; value: number }[] = [];
        let current: { key: unknown; rows: IndexRow[] } | undefined;
        for (const row of naiveRows(rows, range)) {
          if (current !== undefined && compareViewKeys(groupKey(row.key), groupKey(current.key)) === 0) current.rows.push(row);
          else {
            if (current !== undefined) expected.push({ key: groupKey(current.key), value: sum(current.rows) });
            current = { key: row.key, rows: [row] };
          }
        }
        if (current !== undefined) expected.push({ key: groupKey(current.key), value: sum(current.rows) });
        const ranges = rangesOf(rows, { ...range, keys: undefined }, compareViewKeys);
        expect(reduceRows(rows, ranges, { groupLevel: level, descending: range.descending, skip: 0, limit: Infinity }, builtinReducerOf("_sum")!, compareViewKeys)).toEqual(expected);
      }),
    );
  });

  it("a merge is the rows kept plus the rows added, in index order; the old array is left as it was", () => {
    fc.assert(
      fc.property(sortedRows, fc.array(fc.boolean(), { maxLength: 40 }), fc.array(rowArb, { maxLength: 20 }), (rows, drop, added) => {
        const before = [...rows];
        const removed = new Set(rows.filter((_, i) => drop[i] === true));
        const merged = mergeRows(rows, removed, added, compare);
        expect(merged).toEqual([...rows.filter((row) => !removed.has(row)), ...added].sort(compare));
        expect(rows).toEqual(before);
      }),
    );
  });

  it("a merge tells where its changes sat: a removed row's index in the old rows, an added row's in the result", () => {
    fc.assert(
      fc.property(sortedRows, fc.array(fc.boolean(), { maxLength: 40 }), fc.array(rowArb, { maxLength: 20 }), (rows, drop, addedRows) => {
        const removed = new Set(rows.filter((_, i) => drop[i] === true));
        const added = addedRows.map((row) => ({ ...row }));
        const positions = new Map<IndexRow, number>();
        const merged = mergeRows(rows, removed, added, compare, positions);
        expect(positions.size).toBe(removed.size + added.length);
        if (removed.size + added.length > 8 || rows.length <= 32) {
          // The walking merge: exact.
          for (const row of removed) expect(rows[positions.get(row)!]).toBe(row);
          for (const row of added) expect(merged[positions.get(row)!]).toBe(row);
        }
      }),
    );
  });

  it("a spliced merge places its changes within the handful of rows the other changes shift them by", () => {
    const largeRows = fc.array(rowArb, { minLength: 33, maxLength: 200 }).map((rows) => [...rows].sort(compare) as IndexRow[]);
    fc.assert(
      fc.property(largeRows, fc.array(fc.nat(), { maxLength: 4 }), fc.array(rowArb, { maxLength: 4 }), (rows, dropAt, addedRows) => {
        const removed = new Set(dropAt.map((i) => rows[i % rows.length]!));
        const added = addedRows.map((row) => ({ ...row }));
        const positions = new Map<IndexRow, number>();
        const merged = mergeRows(rows, removed, added, compare, positions);
        const shift = removed.size + added.length;
        for (const row of removed) expect(Math.abs(positions.get(row)! - rows.indexOf(row))).toBeLessThanOrEqual(shift);
        for (const row of added) expect(Math.abs(positions.get(row)! - merged.indexOf(row))).toBeLessThanOrEqual(shift);
      }),
    );
  });

  it("a merge of a few changes into a large index (spliced into a copy) is the same", () => {
    // More than 32 rows and at most 8 changes: the splicing path, which the general property above seldom reaches.
    // Few distinct values, so that added rows often equal kept ones and their order among them shows.
    const denseRowArb = fc.record({ key: keyArb, id: fc.constantFrom("d1", "d2"), value: fc.integer({ min: 0, max: 1 }) });
    const largeRows = fc.array(denseRowArb, { minLength: 33, maxLength: 200 }).map((rows) => [...rows].sort(compare) as IndexRow[]);
    fc.assert(
      fc.property(largeRows, fc.array(fc.nat(), { maxLength: 4 }), fc.array(denseRowArb, { maxLength: 4 }), (rows, dropAt, added) => {
        const before = [...rows];
        const removed = new Set(dropAt.map((i) => rows[i % rows.length]!));
        const merged = mergeRows(rows, removed, added, compare);
        // The very row objects, in order: an added row goes after the kept rows equal to it (a stable sort).
        const expected = [...rows.filter((row) => !removed.has(row)), ...added].sort(compare);
        expect(merged).toHaveLength(expected.length);
        merged.forEach((row, i) => expect(row).toBe(expected[i]));
        expect(rows).toEqual(before);
      }),
    );
  });

  it("_sum adds arrays element-wise and objects field-wise; other values make CouchDB's error value", () => {
    const reduce = (values: unknown[]) => builtinReducerOf("_sum")!.reduce({ count: values.length, key: () => null, value: (i) => values[i] });
    expect(reduce([1, [2, 3], 4])).toEqual([7, 3]);
    expect(reduce([{ a: 1, b: { c: 2 } }, { b: { c: 3 }, d: 1 }])).toEqual({ a: 1, b: { c: 5 }, d: 1 });
    expect(reduce([1, "x", 2])).toMatchObject({ error: "builtin_reduce_error", caused_by: "x" });
    expect(builtinReducerOf("_count")!.reduce({ count: 3, key: () => null, value: () => "anything" })).toBe(3);
    expect(builtinReducerOf("_approx_count_distinct")!.reduce({ count: 3, key: (i) => ["c", "c\u200B", "c"][i], value: () => null })).toBe(2);
    expect(() => builtinReducerOf("_stats")!.reduce({ count: 1, key: () => null, value: () => "l1" })).toThrow("non-numeric _stats input: <<108,49>>");
    expect(builtinReducerOf("_foo")).toBeUndefined();
  });
});
