/**
 * Background indexing (ken) as one of upholster's subsystems: the daemon,
 * its `/_upholster/indexing/*` routes, its status and metrics. It builds
 * with the store's own views when the store has a view engine (the memory
 * store's `ViewStore`), plus whatever backends it is given (CouchDB's over
 * HTTP, an embedder's own).
 */
import type { IndexingConfig } from "../../core/indexing/index.js";
import { createMemoryViewsBackend } from "../../adapters/memory/indexing/views-backend.js";
import { indexingRoutes } from "../../http/indexing/routes.js";
import type { IndexBackend } from "../../ports/index-backend.js";
import type { Logger, Scheduler, StatePort } from "../../ports/shell.js";
import type { CompactionStore, DocumentStore } from "../../ports/store.js";
import { viewStoreOf } from "../documents/subsystem.js";
import type { Subsystem } from "../subsystem.js";
import { createIndexingDaemon, type IndexingDaemon, type IndexingStore } from "./daemon.js";

/** What an embedder (or the CLI) may choose. */
export interface IndexingSubsystemOptions {
  /** Backends besides the store's own views (CouchDB's: `createCouchIndexBackends(...).backends`). */
  readonly backends?: readonly IndexBackend[] | undefined;
  /** Build with the store's own view engine when it has one. Default true. */
  readonly storeViews?: boolean | undefined;
  /** Seeds the core's PRNG (replayable runs). Default: random. */
  readonly seed?: number | undefined;
  /** Store names to db names (CouchDB shard objects to their db). */
  readonly dbNameOf?: ((name: string) => string) | undefined;
  /** Indexes listed in status at most. Default 1000. */
  readonly statusMaxIndexes?: number | undefined;
}

export interface IndexingSubsystemDeps extends IndexingSubsystemOptions {
  readonly store: CompactionStore;
  readonly scheduler: Scheduler;
  readonly config: IndexingConfig;
  readonly logger: Logger;
  readonly state?: StatePort | undefined;
}

export interface IndexingSubsystem extends Subsystem {
  readonly daemon: IndexingDaemon;
}

/** Deploys write design docs: a store without the document port refuses them, clearly. */
const withDocuments = (store: CompactionStore): IndexingStore => {
  const documents = store as Partial<DocumentStore>;
  if (typeof documents.getDoc === "function" && typeof documents.bulkDocs === "function") return store as CompactionStore & DocumentStore;
  const refuse = (): Promise<never> => Promise.reject(Object.assign(new Error("this store cannot read or write documents: deploys need the DocumentStore port"), { transient: false }));
  return Object.assign(Object.create(store) as CompactionStore, { getDoc: refuse, bulkDocs: refuse });
};

export function indexingSubsystem(deps: IndexingSubsystemDeps): IndexingSubsystem {
  const views = deps.storeViews === false ? undefined : viewStoreOf(deps.store);
  const own = views === undefined ? [] : [createMemoryViewsBackend({ views, store: deps.store })];
  const daemon = createIndexingDaemon({ ...deps, store: withDocuments(deps.store), backends: [...own, ...(deps.backends ?? [])] });
  return {
    name: "indexing",
    daemon,
    start: () => daemon.start(),
    stop: () => daemon.stop(),
    handleStoreEvent: (event) => daemon.handleStoreEvent(event),
    routes: [indexingRoutes(daemon)],
    status: () => daemon.status(),
    metrics: () => daemon.metrics(),
  };
}
