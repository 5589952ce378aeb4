/**
 * A view query (`GET /{db}/_design/{ddoc}/_view/{view}`), decoded: CouchDB's
 * parameters under camelCase names, defaults filled in. The view port
 * (src/ports/views.ts) takes it as is; `decodeViewQuery` makes one from a
 * query string.
 */

export type ViewUpdate = "true" | "false" | "lazy";

export interface ViewQuery {
  /** The rows of this key only (undefined: not given; `null` is the JSON key null). Wins over `startkey`/`endkey`. */
  readonly key?: unknown;
  /** The rows of each key, in this order (reversed when descending, as CouchDB does). */
  readonly keys?: readonly unknown[];
  readonly startkey?: unknown;
  readonly endkey?: unknown;
  /** Only with `startkey`: where among the rows of that key to start. */
  readonly startkeyDocId?: string;
  /** Only with `endkey`. */
  readonly endkeyDocId?: string;
  /** Default true. */
  readonly inclusiveEnd: boolean;
  readonly descending: boolean;
  /** Undefined: no limit. */
  readonly limit?: number;
  readonly skip: number;
  /** Undefined: reduce when the view has a reduce function. */
  readonly reduce?: boolean;
  /** Undefined: not given (CouchDB tells `group=false&group_level=1`, an error, from `group_level=1`). */
  readonly group?: boolean;
  readonly groupLevel?: number;
  readonly includeDocs: boolean;
  /** `true` (default): bring the index up to date first; `false`: as it is; `lazy`: as it is, then update. */
  readonly update: ViewUpdate;
  /** Include the index's `update_seq` in the answer. */
  readonly updateSeq: boolean;
}

export const DEFAULT_VIEW_QUERY: ViewQuery = {
  inclusiveEnd: true,
  descending: false,
  skip: 0,
  includeDocs: false,
  update: "true",
  updateSeq: false,
};

/** A query from the parameters given, CouchDB's defaults for the rest. */
export const viewQuery = (given: Partial<ViewQuery> = {}): ViewQuery => ({ ...DEFAULT_VIEW_QUERY, ...given });

/** Why a query was refused, as CouchDB says it. */
export interface ViewQueryProblem {
  readonly status: 400;
  readonly error: "query_parse_error" | "bad_request";
  readonly reason: string;
}

export const queryParseError = (reason: string): ViewQueryProblem => ({ status: 400, error: "query_parse_error", reason });
