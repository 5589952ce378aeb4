/**
 * A decoded query checked against the view it asks (couch_mrview_util
 * validate_args, then check_range), with CouchDB's errors:
 *
 * - the query is a reduce one when the view has a reduce function and
 *   `reduce` is not false; `reduce=true` on a map-only view is
 *   "Reduce is invalid for map-only views.";
 * - grouping: `group=true` is exact, `group_level=N` groups array keys by
 *   their first N elements, neither is one group (level 0); grouping a map
 *   query is "Invalid use of grouping on a map view." (level 0 aside);
 * - `keys` on a reduce query needs `group=true`; `keys` excludes
 *   `key`/`startkey`/`endkey`; `include_docs` is for map queries only;
 * - `startkey` after `endkey` in the direction of the query is "No rows can
 *   match your key range, reverse your start_key and end_key or set
 *   descending=..." (keys compared with the view's collation, then doc ids).
 */
import { left, right, type Either } from "fp-ts/lib/Either.js";
import { compareDocIds } from "./collation.js";
import type { KeyCompare } from "./row-order.js";
import { queryParseError, type ViewQuery, type ViewQueryProblem } from "./view-query.js";

/** Where a range starts or ends: a key and, among its rows, a doc id (undefined: before or after all of them). */
export interface KeyBound {
  readonly key: unknown;
  readonly docId: string | undefined;
}

export type GroupLevel = "exact" | number;

export interface ResolvedViewQuery {
  /** Run the view's reduce (else: map rows). */
  readonly reduce: boolean;
  /** For reduce queries. */
  readonly groupLevel: GroupLevel;
  /** Several keys, in the order their rows come (already reversed for descending). */
  readonly keys: readonly unknown[] | undefined;
  readonly start: KeyBound | undefined;
  readonly end: KeyBound | undefined;
  readonly inclusiveEnd: boolean;
  readonly descending: boolean;
  readonly skip: number;
  /** Infinity when not limited. */
  readonly limit: number;
  readonly includeDocs: boolean;
}

const groupLevelOf = (query: ViewQuery): Either<ViewQueryProblem, GroupLevel> => {
  if (query.group === false && query.groupLevel !== undefined && query.groupLevel > 0) {
    return left(queryParseError("Can't specify group=false and group_level>0 at the same time"));
  }
  if (query.groupLevel !== undefined) return right(query.groupLevel);
  return right(query.group === true ? "exact" : 0);
};

/** `key` wins; a single `keys` entry is that key (CouchDB's parser does the same). */
const rangeOf = (query: ViewQuery): { keys: readonly unknown[] | undefined; startkey: unknown; endkey: unknown } => {
  if (query.key !== undefined) return { keys: query.keys, startkey: query.key, endkey: query.key };
  if (query.keys !== undefined && query.keys.length === 1) return { keys: undefined, startkey: query.keys[0], endkey: query.keys[0] };
  return { keys: query.keys, startkey: query.startkey, endkey: query.endkey };
};

/** CouchDB compares the bounds with their doc ids defaulted to the lowest or highest id of the direction. */
const boundsInOrder = (query: ViewQuery, start: unknown, end: unknown, compareKeys: KeyCompare): boolean => {
  const LOW = "";
  const HIGH = "\u{10FFFF}\u{10FFFF}";
  const startId = query.startkeyDocId ?? (query.descending ? HIGH : LOW);
  const endId = query.endkeyDocId ?? (query.descending ? LOW : HIGH);
  const order = compareKeys(start, end) || compareDocIds(startId, endId);
  return query.descending ? order >= 0 : order < 0;
};

const sameJson = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

export function resolveViewQuery(query: ViewQuery, view: { readonly hasReduce: boolean }, compareKeys: KeyCompare): Either<ViewQueryProblem, ResolvedViewQuery> {
  const level = groupLevelOf(query);
  if (level._tag === "Left") return level;
  const groupLevel = level.right;
  if (!view.hasReduce && query.reduce === true) return left(queryParseError("Reduce is invalid for map-only views."));
  const reduce = view.hasReduce && query.reduce !== false;
  const { keys, startkey, endkey } = rangeOf(query);
  if (reduce && groupLevel !== "exact" && keys !== undefined) return left(queryParseError("Multi-key fetches for reduce views must use `group=true`"));
  if (keys !== undefined && keys.length > 0 && (startkey !== undefined || endkey !== undefined)) {
    return left(queryParseError("`keys` is incompatible with `key`, `start_key` and `end_key`"));
  }
  if (!reduce && groupLevel !== 0) return left(queryParseError("Invalid use of grouping on a map view."));
  if (reduce && query.includeDocs) return left(queryParseError("`include_docs` is invalid for reduce"));
  if (startkey !== undefined && endkey !== undefined && !sameJson(startkey, endkey) && !boundsInOrder(query, startkey, endkey, compareKeys)) {
    const flip = query.descending ? "false" : "true";
    return left(queryParseError(`No rows can match your key range, reverse your start_key and end_key or set descending=${flip}`));
  }
  return right({
    reduce,
    groupLevel,
    keys: keys === undefined ? undefined : query.descending ? [...keys].reverse() : keys,
    start: startkey === undefined ? undefined : { key: startkey, docId: query.startkeyDocId },
    end: endkey === undefined ? undefined : { key: endkey, docId: query.endkeyDocId },
    inclusiveEnd: query.inclusiveEnd,
    descending: query.descending,
    skip: query.skip,
    limit: query.limit ?? Number.POSITIVE_INFINITY,
    includeDocs: query.includeDocs,
  });
}
