/**
 * Which rows of a view a query's key range covers, as CouchDB's b-tree fold
 * options do (couch_mrview_util:key_opts):
 *
 * - ascending: from the first row at or after (startkey, startkey_docid or
 *   the lowest id) to the last row at or before (endkey, endkey_docid or the
 *   highest id); with `inclusive_end=false`, up to the first row at or after
 *   (endkey, endkey_docid or the lowest id): every row of endkey is out
 *   unless endkey_docid names where to stop;
 * - descending: the same from the other end, with the defaults swapped.
 *
 * A range is a half-open interval [low, high) of indexes into the rows in
 * ascending order, whatever the direction of the query.
 */
import { compareDocIds } from "./collation.js";
import type { KeyBound } from "./resolve-query.js";
import type { IndexRow, KeyCompare } from "./row-order.js";

export interface RowRange {
  readonly low: number;
  readonly high: number;
}

/** Below or above every doc id of a key. */
type IdBound = string | "lowest" | "highest";

const compareToBound = (row: IndexRow, key: unknown, id: IdBound, compareKeys: KeyCompare): number => {
  const byKey = compareKeys(row.key, key);
  if (byKey !== 0) return byKey;
  if (id === "lowest") return 1;
  if (id === "highest") return -1;
  return compareDocIds(row.id, id);
};

/** The first index whose row is at or after (key, id). */
const firstAtOrAfter = (rows: readonly IndexRow[], key: unknown, id: IdBound, compareKeys: KeyCompare): number => {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareToBound(rows[mid]!, key, id, compareKeys) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
};

/** The first index whose row is after (key, id). */
const firstAfter = (rows: readonly IndexRow[], key: unknown, id: IdBound, compareKeys: KeyCompare): number => {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareToBound(rows[mid]!, key, id, compareKeys) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
};

export interface RangeQuery {
  readonly start: KeyBound | undefined;
  readonly end: KeyBound | undefined;
  readonly inclusiveEnd: boolean;
  readonly descending: boolean;
}

/** The rows between the bounds; empty (low = high) when they cross. */
export function rangeOf(rows: readonly IndexRow[], query: RangeQuery, compareKeys: KeyCompare): RowRange {
  const { start, end, inclusiveEnd, descending } = query;
  let low: number;
  let high: number;
  if (!descending) {
    low = start === undefined ? 0 : firstAtOrAfter(rows, start.key, start.docId ?? "lowest", compareKeys);
    high =
      end === undefined
        ? rows.length
        : inclusiveEnd
          ? firstAfter(rows, end.key, end.docId ?? "highest", compareKeys)
          : firstAtOrAfter(rows, end.key, end.docId ?? "lowest", compareKeys);
  } else {
    high = start === undefined ? rows.length : firstAfter(rows, start.key, start.docId ?? "highest", compareKeys);
    low =
      end === undefined
        ? 0
        : inclusiveEnd
          ? firstAtOrAfter(rows, end.key, end.docId ?? "lowest", compareKeys)
          : firstAfter(rows, end.key, end.docId ?? "highest", compareKeys);
  }
  return low <= high ? { low, high } : { low, high: low };
}

/** The ranges a query reads, in the order it reads them: one per key of `keys`, else one. */
export function rangesOf(
  rows: readonly IndexRow[],
  query: RangeQuery & { readonly keys: readonly unknown[] | undefined },
  compareKeys: KeyCompare,
): RowRange[] {
  if (query.keys === undefined) return [rangeOf(rows, query, compareKeys)];
  return query.keys.map((key) =>
    rangeOf(rows, { ...query, start: { key, docId: query.start?.docId }, end: { key, docId: query.end?.docId } }, compareKeys),
  );
}

/** Where a range begins and ends counted in the direction of the query (offsets count from there). */
export const positionsOf = (range: RowRange, total: number, descending: boolean): { readonly from: number; readonly to: number } =>
  descending ? { from: total - range.high, to: total - range.low } : { from: range.low, to: range.high };
