/**
 * The rows of a raw-collated list (`_all_docs`, `_all_dbs`) that a range
 * query selects, as CouchDB 3.4 selects them: `startkey`/`endkey` bound the
 * range (swapped roles when `descending`), `inclusive_end` decides whether
 * `endkey` itself is in, then `skip` and `limit`. `offset` counts the rows
 * before the range's start in the direction of travel, plus `skip` (fixture
 * 44: descending from "doc-c" with skip 1 gives offset 1). Keys compare in
 * CouchDB's raw collation (Erlang's term order: every non-string sorts
 * before every string, so `startkey=1` starts at the first doc).
 */
import { compareRaw } from "../../core/views/index.js";
import type { ViewQuery } from "../../ports/views.js";

export interface KeyRange {
  /** `{ key }` when given (any JSON; a non-string sorts before every id). */
  readonly start?: { readonly key: unknown } | undefined;
  readonly end?: { readonly key: unknown } | undefined;
  readonly inclusiveEnd: boolean;
  readonly descending: boolean;
  readonly skip: number;
  readonly limit?: number | undefined;
}

export interface RangeWindow<T> {
  readonly offset: number;
  readonly rows: readonly T[];
}

/** How many of `sorted` (raw order) sort below `key`, or at or below it with `orEqual`. */
function countBelow(sorted: readonly string[], key: unknown, orEqual: boolean): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const order = compareRaw(sorted[mid], key);
    if (order < 0 || (orEqual && order === 0)) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** `sorted` and `keys` are parallel: `keys[i]` is `sorted[i]`'s key, in raw order. */
export function selectRange<T>(sorted: readonly T[], keys: readonly string[], range: KeyRange): RangeWindow<T> {
  const { low, high } = range.descending ? descendingBounds(keys, range) : ascendingBounds(keys, range);
  const inRange = sorted.slice(low, Math.max(low, high));
  const ordered = range.descending ? inRange.reverse() : inRange;
  const skipped = ordered.slice(range.skip);
  const rows = range.limit === undefined ? skipped : skipped.slice(0, range.limit);
  const before = range.descending ? keys.length - high : low;
  return { offset: Math.min(keys.length, before + range.skip), rows };
}

/** `[low, high)` in ascending indices. */
function ascendingBounds(keys: readonly string[], range: KeyRange): { low: number; high: number } {
  const low = range.start === undefined ? 0 : countBelow(keys, range.start.key, false);
  const high = range.end === undefined ? keys.length : countBelow(keys, range.end.key, range.inclusiveEnd);
  return { low, high };
}

/** Descending: `start` is the high end (inclusive), `end` the low end. */
function descendingBounds(keys: readonly string[], range: KeyRange): { low: number; high: number } {
  const high = range.start === undefined ? keys.length : countBelow(keys, range.start.key, true);
  const low = range.end === undefined ? 0 : countBelow(keys, range.end.key, !range.inclusiveEnd);
  return { low, high };
}

/**
 * The part of a decoded view query that selects rows by key. `_all_docs`
 * (`docIdKeys`) also takes `startkey_docid`/`endkey_docid` as the keys when
 * no `startkey`/`endkey` is given, as CouchDB does.
 */
export function rangeOf(query: ViewQuery, docIdKeys = false): KeyRange {
  const start = "startkey" in query ? { key: query.startkey } : docIdKeys && query.startkeyDocId !== undefined ? { key: query.startkeyDocId } : undefined;
  const end = "endkey" in query ? { key: query.endkey } : docIdKeys && query.endkeyDocId !== undefined ? { key: query.endkeyDocId } : undefined;
  return { start, end, inclusiveEnd: query.inclusiveEnd, descending: query.descending, skip: query.skip, limit: query.limit };
}
