/**
 * The rows of a map query: each range in turn, in the query's direction,
 * `skip` rows passed over (across ranges), at most `limit` kept.
 *
 * `offset` is what CouchDB reports on one shard (couch_mrview:map_fold):
 * the position, in the query's direction, of the first row returned; when
 * none is (an empty range, everything skipped, `limit=0` before any row),
 * the position where the last range read stopped. (A clustered CouchDB sums
 * its shards' offsets instead, which differs for `keys` queries only.)
 */
import type { IndexRow } from "./row-order.js";
import { positionsOf, type RowRange } from "./row-range.js";

export interface MapRowsQuery {
  readonly descending: boolean;
  readonly skip: number;
  /** Infinity when not limited. */
  readonly limit: number;
}

export interface MapRows {
  readonly totalRows: number;
  readonly offset: number;
  readonly rows: readonly IndexRow[];
}

export function selectMapRows(rows: readonly IndexRow[], ranges: readonly RowRange[], query: MapRowsQuery): MapRows {
  const total = rows.length;
  const selected: IndexRow[] = [];
  let skip = query.skip;
  let offset: number | undefined;
  let stoppedAt = 0;
  for (const range of ranges) {
    const { from, to } = positionsOf(range, total, query.descending);
    const length = to - from;
    if (skip >= length) {
      skip -= length;
      stoppedAt = to;
      continue;
    }
    const first = from + skip;
    skip = 0;
    offset ??= first;
    const take = Math.min(length - (first - from), query.limit - selected.length);
    for (let position = first; position < first + take; position++) selected.push(rows[query.descending ? total - 1 - position : position]!);
    stoppedAt = first + take;
    if (selected.length >= query.limit) break;
  }
  return { totalRows: total, offset: offset ?? stoppedAt, rows: selected };
}
