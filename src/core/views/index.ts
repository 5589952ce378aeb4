/**
 * Public API of the view core (CouchDB's couch_mrview semantics), pure: no
 * I/O, no clock, no randomness. A store keeps each map function's rows in
 * index order and answers a query in three steps:
 *
 *   decodeViewQuery(searchParams, body?)           -> Either<ViewQueryProblem, ViewQuery>
 *   resolveViewQuery(query, view, compareKeys)     -> Either<ViewQueryProblem, ResolvedViewQuery>
 *   rangesOf(rows, resolved, compareKeys)          -> the rows the query reads
 *   selectMapRows(rows, ranges, resolved)          -> { totalRows, offset, rows }     (map)
 *   reduceRows(rows, ranges, resolved, reducer, …) -> [{ key, value }]                 (reduce)
 *
 * and builds its rows with `viewGroupOf(designDocBody)` (what to run, the
 * signature), `rowCompareOf(keyCompareOf(collation))` and `mergeRows`.
 */
export { compareViewKeys, compareDocIds, compareStrings } from "./collation.js";
export { compareRaw } from "./raw-collation.js";
export { DEFAULT_VIEW_QUERY, viewQuery, queryParseError, type ViewQuery, type ViewQueryProblem, type ViewUpdate } from "./view-query.js";
export { decodeViewQuery, CouchBooleanC, ErlangIntegerC } from "./query-params.js";
export { resolveViewQuery, type ResolvedViewQuery, type KeyBound, type GroupLevel } from "./resolve-query.js";
export { keyCompareOf, rowCompareOf, mergeRows, type RowPositions, type IndexRow, type KeyCompare, type RowCompare, type Collation } from "./row-order.js";
export { rangeOf, rangesOf, positionsOf, type RowRange, type RangeQuery } from "./row-range.js";
export { selectMapRows, type MapRows, type MapRowsQuery } from "./map-rows.js";
export { reduceRows, type ReducedRow, type ReduceRowsQuery } from "./reduce-rows.js";
export { builtinReducerOf, isBuiltinSource, ReduceFailure, type BuiltinReducer, type ReduceInput } from "./builtin-reduce.js";
export { viewGroupOf, type ViewGroup, type ViewDefinition, type MapFunction } from "./view-group.js";
