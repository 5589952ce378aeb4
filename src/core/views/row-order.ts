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

/**
 * `rows` without `removed`, plus `added` (any order), in index order. One
 * pass over `rows`: each added row finds its place by binary search when
 * they are few (O(added log rows) comparisons), by walking along when they
 * are many (O(rows + added)). `rows` is not modified, so readers holding it
 * keep a consistent snapshot.
 */
export function mergeRows<Row extends IndexRow>(rows: readonly Row[], removed: ReadonlySet<Row>, added: readonly Row[], compare: RowCompare): Row[] {
  // A copy: `added` stays as given (its owner may hold it).
  const incoming = (removed.size === 0 ? added.slice() : added.filter((row) => !removed.has(row))).sort(compare);
  const merged: Row[] = [];
  const keep = (row: Row): void => {
    if (removed.size === 0 || !removed.has(row)) merged.push(row);
  };
  const walk = incoming.length * Math.log2(rows.length + 2) > rows.length;
  let from = 0;
  for (const row of incoming) {
    const at = walk ? walkAfter(rows, row, from, compare) : firstAfter(rows, row, from, compare);
    for (let i = from; i < at; i++) keep(rows[i]!);
    merged.push(row);
    from = at;
  }
  for (let i = from; i < rows.length; i++) keep(rows[i]!);
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
