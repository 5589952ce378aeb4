/**
 * The rows of one view, in index order: by key (the view's collation), then
 * by doc id (UTF-8 bytes), then, for the rows one document emits under equal
 * keys, by Erlang term order of key and value (CouchDB stores those as
 * duplicates sorted with `lists:sort/1`). A total order: a view built
 * incrementally lists its rows exactly as one built from scratch.
 */
import { compareDocIds, compareViewKeys } from "./collation.js";
import { compareRaw } from "./raw-collation.js";

export interface IndexRow {
  readonly key: unknown;
  /** The emitting document's id. */
  readonly id: string;
  readonly value: unknown;
}

export type KeyCompare = (a: unknown, b: unknown) => number;

/** `"options": {"collation": "raw"}` on a view selects Erlang term order for its keys. */
export type Collation = "icu" | "raw";

export const keyCompareOf = (collation: Collation): KeyCompare => (collation === "raw" ? compareRaw : compareViewKeys);

export type RowCompare = (a: IndexRow, b: IndexRow) => number;

export const rowCompareOf = (compareKeys: KeyCompare): RowCompare => (a, b) =>
  compareKeys(a.key, b.key) || compareDocIds(a.id, b.id) || compareRaw(a.key, b.key) || compareRaw(a.value, b.value);

/** Where the rows a merge removed and added sat (see `mergeRows`). */
export type RowPositions<Row> = Map<Row, number>;

/**
 * `rows` without `removed`, plus `added` (any order), in index order. One
 * pass over `rows`: each added row finds its place by binary search when
 * they are few (O(added log rows) comparisons), by walking along when they
 * are many (O(rows + added)). `rows` is not modified, so readers holding it
 * keep a consistent snapshot.
 *
 * `positions`, when given, learns where each change sat: a removed row's
 * index in `rows`, an added row's in the result (the storage model counts
 * the b-tree leaves a commit touches from them).
 */
export function mergeRows<Row extends IndexRow>(rows: readonly Row[], removed: ReadonlySet<Row>, added: readonly Row[], compare: RowCompare, positions?: RowPositions<Row>): Row[] {
  // A copy: `added` stays as given (its owner may hold it).
  const incoming = (removed.size === 0 ? added.slice() : added.filter((row) => !removed.has(row))).sort(compare);
  if (incoming.length + removed.size <= FEW_CHANGES && rows.length > 4 * FEW_CHANGES) return spliceRows(rows, removed, incoming, compare, positions);
  const merged: Row[] = [];
  const keep = (row: Row, at: number): void => {
    if (removed.size === 0 || !removed.has(row)) merged.push(row);
    else positions?.set(row, at);
  };
  const walk = incoming.length * Math.log2(rows.length + 2) > rows.length;
  let from = 0;
  for (const row of incoming) {
    const at = walk ? walkAfter(rows, row, from, compare) : firstAfter(rows, row, from, compare);
    for (let i = from; i < at; i++) keep(rows[i]!, i);
    positions?.set(row, merged.length);
    merged.push(row);
    from = at;
  }
  for (let i = from; i < rows.length; i++) keep(rows[i]!, i);
  return merged;
}

/** The first index from `from` on whose row sorts after `row`, stepping. */
const walkAfter = <Row extends IndexRow>(rows: readonly Row[], row: Row, from: number, compare: RowCompare): number => {
  let at = from;
  while (at < rows.length && compare(rows[at]!, row) <= 0) at++;
  return at;
};

/** The first index in `rows[from..]` whose row sorts after `row`. */
const firstAfter = <Row extends IndexRow>(rows: readonly Row[], row: Row, from: number, compare: RowCompare): number => {
  let low = from;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compare(rows[mid]!, row) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
};

/** Up to this many rows added plus removed, a commit copies the array whole and splices (see `spliceRows`). */
const FEW_CHANGES = 8;

/**
 * `mergeRows` for a handful of changes to a large index (an update pass of a
 * few documents, the common case): the array copied in one go and each change
 * spliced in at its binary-searched place, instead of a pass testing every
 * row against `removed` (a twentieth of a simulation). Same result: a
 * removed row is found by identity among the rows comparing equal to it; an
 * added row goes after every row not above it, as `firstAfter` places it.
 */
function spliceRows<Row extends IndexRow>(rows: readonly Row[], removed: ReadonlySet<Row>, incoming: readonly Row[], compare: RowCompare, positions?: RowPositions<Row>): Row[] {
  const merged = rows.slice();
  for (const row of removed) {
    for (let i = firstAtOrAfter(merged, row, compare); i < merged.length && compare(merged[i]!, row) === 0; i++) {
      if (merged[i] === row) {
        merged.splice(i, 1);
        // Where it sat once the removals before it were made: within a handful of its place in `rows`.
        positions?.set(row, i);
        break;
      }
    }
  }
  for (const row of incoming) {
    const at = firstAfter(merged, row, 0, compare);
    merged.splice(at, 0, row);
    positions?.set(row, at);
  }
  return merged;
}

/** The first index whose row does not sort before `row`. */
const firstAtOrAfter = <Row extends IndexRow>(rows: readonly Row[], row: Row, compare: RowCompare): number => {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compare(rows[mid]!, row) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
};
