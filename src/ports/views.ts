/**
 * The view port: what a store that builds CouchDB views itself (the memory
 * store) offers to upholster's HTTP API and to the background indexer.
 * CouchDB itself is reached over HTTP instead; it does not implement this.
 *
 * Shapes follow CouchDB 3.4 (`GET /{db}/_design/{ddoc}/_view/{view}`,
 * `GET /{db}/_design/{ddoc}/_info`); parameters arrive decoded.
 */
import type { DbName, DesignDocId } from "./store.js";
import type { ViewQuery } from "../core/views/view-query.js";

/**
 * `GET .../_view/{view}` parameters, decoded (CouchDB's names in camelCase,
 * defaults filled in): the view core's type, so `decodeViewQuery` (from a
 * query string) and `viewQuery({...})` (from code) make one.
 */
export type { ViewQuery, ViewUpdate } from "../core/views/view-query.js";
export { viewQuery, DEFAULT_VIEW_QUERY } from "../core/views/view-query.js";

export interface ViewRow {
  /** Absent on reduced rows. */
  readonly id?: string;
  readonly key: unknown;
  readonly value: unknown;
  /** With `include_docs=true`: the doc, or null when it was deleted. */
  readonly doc?: unknown;
}

/** CouchDB's body: map results carry `total_rows` and `offset`; reduced ones only `rows`. */
export interface ViewResult {
  readonly total_rows?: number;
  readonly offset?: number;
  readonly rows: readonly ViewRow[];
  readonly update_seq?: string | number;
}

/** `GET /{db}/_design/{ddoc}/_info`'s `view_index`, CouchDB 3.4's fields. */
export interface ViewGroupInfo {
  readonly name: string;
  readonly view_index: {
    readonly signature: string;
    readonly language: string;
    readonly sizes: { readonly file: number; readonly active: number; readonly external: number };
    readonly update_seq: number;
    readonly purge_seq: number;
    readonly updater_running: boolean;
    readonly compact_running: boolean;
    readonly waiting_clients: number;
    readonly waiting_commit: boolean;
    readonly collator_versions: readonly string[];
    readonly updates_pending: { readonly minimum: number; readonly preferred: number; readonly total: number };
  };
}

/** Why a view call failed, as CouchDB says it (`error`, `reason`, HTTP status). */
export class ViewError extends Error {
  constructor(
    readonly status: 400 | 404 | 500,
    readonly error: string,
    readonly reason: string,
  ) {
    super(`${error}: ${reason}`);
    this.name = "ViewError";
  }
}

export interface ViewStore {
  /** Query a view (map or reduce). Rejects with ViewError (404 missing db/ddoc/view, 400 bad query). */
  queryView(db: DbName, ddoc: DesignDocId, view: string, query: ViewQuery): Promise<ViewResult>;
  /** CouchDB's `_info`. Rejects with ViewError 404 for a missing db or design doc. */
  viewGroupInfo(db: DbName, ddoc: DesignDocId): Promise<ViewGroupInfo>;
  /**
   * Bring a design doc's view group up to the db's current seq. Concurrent
   * callers (queries, the background indexer) share one update: never two
   * builds of one index at once (CouchDB #5710). Resolves with the seq the
   * index reached.
   */
  updateViewGroup(db: DbName, ddoc: DesignDocId): Promise<{ readonly indexSeq: number }>;
}
