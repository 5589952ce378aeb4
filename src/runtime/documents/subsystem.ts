/**
 * CouchDB's document API on upholster's server, as one of its subsystems:
 * for stores that do not serve documents themselves (the embedded memory
 * store; against CouchDB, CouchDB serves them). It only mounts routes
 * (src/http/documents/): nothing to start or stop, no store events to hear
 * (longpoll waits follow the store through its `DocumentApi`).
 */
import type { DocumentApi } from "../../http/documents/index.js";
import { documentRoutes } from "../../http/documents/index.js";
import type { Clock } from "../../ports/shell.js";
import type { ViewStore } from "../../ports/views.js";
import type { Subsystem } from "../subsystem.js";
import { sequentialDocIds } from "./doc-ids.js";

export interface DocumentsSubsystemDeps {
  readonly api: DocumentApi;
  /** The store's view engine, when it has one (`viewStoreOf(store)`); without, view routes answer 501. */
  readonly views?: ViewStore | undefined;
  readonly clock: Clock;
  /** Ids for docs written without one. Default: CouchDB's sequential uuids. */
  readonly newDocId?: (() => string) | undefined;
}

export function documentsSubsystem(deps: DocumentsSubsystemDeps): Subsystem {
  const routes = documentRoutes({ api: deps.api, views: deps.views, clock: deps.clock, newDocId: deps.newDocId ?? sequentialDocIds() });
  return {
    name: "documents",
    start: async () => undefined,
    stop: async () => undefined,
    handleStoreEvent: () => undefined,
    routes,
    status: () => ({ views: deps.views !== undefined }),
    metrics: () => ({}),
  };
}

/** The store as a `ViewStore` when it implements one (the memory store, once its view engine lands). */
export function viewStoreOf(store: object): ViewStore | undefined {
  const candidate = store as Partial<Record<keyof ViewStore, unknown>>;
  const implemented = typeof candidate.queryView === "function" && typeof candidate.viewGroupInfo === "function" && typeof candidate.updateViewGroup === "function";
  return implemented ? (store as ViewStore) : undefined;
}
