/**
 * CouchDB's document API on upholster's server, for stores that do not serve
 * it themselves (the embedded memory store): dbs, docs and design docs,
 * `_bulk_docs`, `_all_docs`, `_changes` (normal, longpoll), views and their
 * `_info`. Every route declares its access (db reader, or admin for
 * `_all_dbs` and creating or deleting dbs); the server's guard enforces it.
 */
import type { Clock } from "../../ports/shell.js";
import type { ViewStore } from "../../ports/views.js";
import type { RouteHandler } from "../types.js";
import { allDocsRoutes } from "./all-docs.js";
import { bulkRoutes } from "./bulk.js";
import { changesRoutes } from "./changes.js";
import { dbRoutes } from "./dbs.js";
import type { DocumentApi } from "./document-api.js";
import { docRoutes, postDocHandler } from "./docs.js";
import { viewRoutes } from "./views.js";

export type * from "./document-api.js";
export { isRefusal } from "./document-api.js";

export interface DocumentRoutesOptions {
  readonly api: DocumentApi;
  /** The store's view engine, when it has one. */
  readonly views?: ViewStore | undefined;
  /** Ids for documents written without one (`POST /{db}`, `_bulk_docs`). */
  readonly newDocId: () => string;
  readonly clock: Clock;
}

/** Most specific first: the one-segment doc path comes last. */
export function documentRoutes(options: DocumentRoutesOptions): RouteHandler[] {
  return [
    ...dbRoutes({ api: options.api, postDoc: postDocHandler(options) }),
    bulkRoutes(options),
    allDocsRoutes(options.api),
    changesRoutes(options),
    viewRoutes(options),
    docRoutes(options),
  ];
}
