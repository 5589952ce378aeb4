/**
 * The answer to a checked view query, from one snapshot of an index:
 * CouchDB's body (`total_rows`, `offset`, `rows` for map queries; `rows`
 * only for reduce queries; `update_seq` when asked).
 *
 * `include_docs` loads each row's document as it is now; a value
 * `{"_id": ...}` (and `_rev`) names another document to load instead
 * (CouchDB's linked documents). A deleted or missing one is `null`; so is
 * an older `_rev` than the current one (the memory store keeps only the
 * latest body of a document).
 */
import {
  builtinReducerOf,
  rangesOf,
  reduceRows,
  ReduceFailure,
  selectMapRows,
  type IndexRow,
  type ResolvedViewQuery,
  type ViewDefinition,
} from "../../../core/views/index.js";
import { ViewError, type ViewResult, type ViewRow } from "../../../ports/views.js";
import type { GroupIndex, GroupSnapshot } from "./group-index.js";

export interface AnswerContext {
  readonly index: GroupIndex;
  readonly snapshot: GroupSnapshot;
  readonly view: ViewDefinition;
  readonly query: ResolvedViewQuery;
  /** The live document, or null (deleted, missing, or not at `rev`). */
  readonly loadDoc: (id: string, rev: string | undefined) => unknown;
  /** Set when the query asked for `update_seq`. */
  readonly updateSeq: string | undefined;
}

const linkedDoc = (row: IndexRow): { id: string; rev: string | undefined } => {
  const value = row.value;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const id = (value as Record<string, unknown>)["_id"];
    const rev = (value as Record<string, unknown>)["_rev"];
    if (typeof id === "string") return { id, rev: typeof rev === "string" ? rev : undefined };
  }
  return { id: row.id, rev: undefined };
};

const mapAnswer = (context: AnswerContext, rows: readonly IndexRow[]): ViewResult => {
  const { query, index, view } = context;
  const selected = selectMapRows(rows, rangesOf(rows, query, index.compareKeys[view.map]!), query);
  const out: ViewRow[] = selected.rows.map((row) => {
    if (!query.includeDocs) return { id: row.id, key: row.key, value: row.value };
    const link = linkedDoc(row);
    return { id: row.id, key: row.key, value: row.value, doc: context.loadDoc(link.id, link.rev) };
  });
  return {
    total_rows: selected.totalRows,
    offset: selected.offset,
    rows: out,
    ...(context.updateSeq === undefined ? {} : { update_seq: context.updateSeq }),
  };
};

const reduceAnswer = (context: AnswerContext, rows: readonly IndexRow[]): ViewResult => {
  const { query, index, view } = context;
  const source = view.reduce ?? "";
  const reducer = builtinReducerOf(source);
  if (reducer === undefined) {
    const what = source.startsWith("_") ? `the built-in reduce ${JSON.stringify(source.split(/\s/)[0])} does not exist` : "JavaScript reduce functions do not run on the memory store yet";
    throw new ViewError(500, "unsupported_reduce", `${what}; query with reduce=false, or use _sum, _count, _stats or _approx_count_distinct`);
  }
  const compareKeys = index.compareKeys[view.map]!;
  try {
    const reduced = reduceRows(rows, rangesOf(rows, query, compareKeys), query, reducer, compareKeys);
    return { rows: reduced, ...(context.updateSeq === undefined ? {} : { update_seq: context.updateSeq }) };
  } catch (error) {
    if (error instanceof ReduceFailure) throw new ViewError(500, error.error, error.reason);
    throw error;
  }
};

export function answerViewQuery(context: AnswerContext): ViewResult {
  const rows = context.snapshot.rows[context.view.map] ?? [];
  return context.query.reduce ? reduceAnswer(context, rows) : mapAnswer(context, rows);
}
