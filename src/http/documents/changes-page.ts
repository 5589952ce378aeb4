/**
 * Which changes a `_changes` request gets, from every change after its
 * `since`, and CouchDB's `last_seq` and `pending` for them:
 *
 * - `filter` (`_design`, `_doc_ids`), then `limit`;
 * - ascending: `last_seq` is the last row's seq when `limit` cut the list
 *   short (fixture 54), else the db's seq;
 * - `descending`: newest first, `since` ignored (as clustered CouchDB),
 *   `last_seq` the oldest row's seq (fixture 55);
 * - `pending`: the changes, filtered or not, left after the last row in the
 *   direction of travel when `limit` cut the list short, else 0. (CouchDB's
 *   own count with a filter and no limit is per shard and not meaningful:
 *   fixtures 56, 57.)
 */
import type { ChangeRow, ChangesSlice } from "./document-api.js";
import type { ChangesFilter, ChangesParams } from "./changes-params.js";

export interface ChangesPage {
  readonly rows: readonly ChangeRow[];
  readonly lastSeq: string;
  readonly pending: number;
}

const passes = (filter: ChangesFilter, row: ChangeRow): boolean =>
  filter.kind === "all" || (filter.kind === "design" ? row.id.startsWith("_design/") : filter.ids.has(row.id));

export function selectChanges(slice: ChangesSlice, params: Pick<ChangesParams, "filter" | "limit" | "descending">): ChangesPage {
  const ordered = params.descending ? [...slice.rows].reverse() : slice.rows;
  const limit = params.limit ?? Number.POSITIVE_INFINITY;
  const rows: ChangeRow[] = [];
  let lastIndex = -1;
  for (let i = 0; i < ordered.length && rows.length < limit; i++) {
    const row = ordered[i] as ChangeRow;
    if (!passes(params.filter, row)) continue;
    rows.push(row);
    lastIndex = i;
  }
  const cutShort = rows.length >= limit;
  const last = rows[rows.length - 1];
  if (params.descending) return { rows, lastSeq: last?.seq ?? "0", pending: cutShort ? ordered.length - lastIndex - 1 : 0 };
  if (!cutShort) return { rows, lastSeq: slice.lastSeq, pending: 0 };
  // limit=0 resumes where it started.
  return { rows, lastSeq: last?.seq ?? slice.since, pending: ordered.length - lastIndex - 1 };
}
