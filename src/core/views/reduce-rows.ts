/**
 * The rows of a reduce query (couch_mrview:red_fold over couch_btree's
 * fold_reduce): each range in turn, cut into groups in the query's
 * direction, one reduced row per group; `skip` and `limit` count groups.
 *
 * - level 0 (no grouping): one group per range, key null;
 * - exact (`group=true`): rows whose keys collate equal ("c", "c\u200B");
 *   the group's key is its first row's, in the query's direction;
 * - level N: array keys by their first N elements (the key shown is that
 *   prefix of the first row's key), other keys exactly.
 *
 * Rows are sorted, so every group is a run of adjacent rows: its end is
 * found by binary search, and a reduce over a large range reads each row
 * once (`_count` reads none).
 */
import type { BuiltinReducer, ReduceInput } from "./builtin-reduce.js";
import type { GroupLevel } from "./resolve-query.js";
import type { IndexRow, KeyCompare } from "./row-order.js";
import type { RowRange } from "./row-range.js";

export interface ReducedRow {
  readonly key: unknown;
  readonly value: unknown;
}

export interface ReduceRowsQuery {
  readonly groupLevel: GroupLevel;
  readonly descending: boolean;
  readonly skip: number;
  /** Infinity when not limited. */
  readonly limit: number;
}

/** What rows of one group share: the whole key (exact), a prefix of an array key (level N), or nothing (level 0). */
const groupKeyOf = (key: unknown, level: GroupLevel): unknown =>
  level === "exact" || !Array.isArray(key) || key.length === 0 ? key : key.slice(0, level);

/** Ascending indexes [low, high) of the group holding row `at`, within `range`. */
const groupAround = (rows: readonly IndexRow[], range: RowRange, at: number, level: GroupLevel, compareKeys: KeyCompare): RowRange => {
  if (level === 0) return range;
  const shared = groupKeyOf(rows[at]!.key, level);
  const inGroupOrAfter = (i: number): boolean => compareKeys(groupKeyOf(rows[i]!.key, level), shared) >= 0;
  const after = (i: number): boolean => compareKeys(groupKeyOf(rows[i]!.key, level), shared) > 0;
  return { low: firstWhere(range.low, at, inGroupOrAfter), high: firstWhere(at + 1, range.high, after) };
};

/** The first index in [low, high) where a monotone predicate holds (high if none). */
const firstWhere = (low: number, high: number, holds: (i: number) => boolean): number => {
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (holds(mid)) high = mid;
    else low = mid + 1;
  }
  return low;
};

const inputOf = (rows: readonly IndexRow[], group: RowRange, descending: boolean): ReduceInput => {
  const { low, high } = group;
  return descending
    ? { count: high - low, key: (i) => rows[high - 1 - i]!.key, value: (i) => rows[high - 1 - i]!.value }
    : { count: high - low, key: (i) => rows[low + i]!.key, value: (i) => rows[low + i]!.value };
};

const keyOfGroup = (rows: readonly IndexRow[], group: RowRange, query: ReduceRowsQuery): unknown => {
  if (query.groupLevel === 0) return null;
  const first = rows[query.descending ? group.high - 1 : group.low]!.key;
  return groupKeyOf(first, query.groupLevel);
};

/** May throw ReduceFailure (`_stats` of a string). */
export function reduceRows(
  rows: readonly IndexRow[],
  ranges: readonly RowRange[],
  query: ReduceRowsQuery,
  reducer: BuiltinReducer,
  compareKeys: KeyCompare,
): ReducedRow[] {
  const out: ReducedRow[] = [];
  let skip = query.skip;
  for (const range of ranges) {
    let low = range.low;
    let high = range.high;
    while (low < high && out.length < query.limit) {
      const group = groupAround(rows, { low, high }, query.descending ? high - 1 : low, query.groupLevel, compareKeys);
      if (query.descending) high = group.low;
      else low = group.high;
      if (skip > 0) {
        skip--;
        continue;
      }
      out.push({ key: keyOfGroup(rows, group, query), value: reducer.reduce(inputOf(rows, group, query.descending)) });
    }
    if (out.length >= query.limit) break;
  }
  return out;
}
