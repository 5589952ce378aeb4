/**
 * Geo (hastings) as one of upholster's subsystems, on every store: the
 * index manager, its backend for the background indexer, the `_geo` routes,
 * and the index files for the compaction daemon (`files`). upholster keeps
 * geo indexes itself (CouchDB 3 has none), following each db's changes.
 *
 * The sandbox: the one given, else its own (`createSandboxFactory()`, a
 * worker thread started on first use), whose sandboxes `stop` disposes.
 */
import { SandboxCache } from "../../adapters/memory/views/sandbox-cache.js";
import { createSandboxFactory } from "../../adapters/sandbox/index.js";
import type { GeoSettings } from "../../config/hastings-section.js";
import { errorText } from "../../core/shared/error-text.js";
import { geoRoutes } from "../../http/geo/routes.js";
import type { GeoIndexFiles, GeoService } from "../../ports/geo.js";
import type { IndexBackend } from "../../ports/index-backend.js";
import type { SandboxFactory, SandboxLimits } from "../../ports/sandbox.js";
import type { Logger } from "../../ports/shell.js";
import type { CompactionStore, DbName } from "../../ports/store.js";
import type { Subsystem } from "../subsystem.js";
import { createGeoBackend } from "./backend.js";
import { geoIndexFiles } from "./files.js";
import { GeoIndexManager } from "./manager.js";
import type { GeoStore } from "./resolve.js";
import { createGeoService } from "./service.js";
import { directoryStorage, memoryStorage } from "./storage.js";

/** What an embedder (or the CLI) may choose; each wins over `[hastings]`. */
export interface GeoSubsystemOptions {
  /** Keep index files here (they survive restarts). Default: `[hastings] index_dir`, else memory only. */
  readonly indexDir?: string | undefined;
  readonly enabled?: boolean | undefined;
  /** Runs st_index functions. Default: the subsystem's own, closed by `stop`. */
  readonly sandbox?: SandboxFactory | undefined;
  /** Time and memory limits of st_index functions (default: CouchDB's, src/adapters/sandbox/limits.ts). */
  readonly sandboxLimits?: Partial<SandboxLimits> | undefined;
  /** Compiled index functions kept (one per signature in use). Default 16. */
  readonly maxSandboxes?: number | undefined;
  /** Documents per changes page and sandbox call. Default 1000. */
  readonly pageDocs?: number | undefined;
}

export interface GeoSubsystemDeps extends GeoSubsystemOptions {
  readonly store: CompactionStore;
  readonly settings: GeoSettings;
  readonly logger: Logger;
  /** A query came for a design doc: the indexer may favour its indexes. */
  readonly onQuery?: ((db: DbName, ddoc: string) => void) | undefined;
}

export interface GeoSubsystem extends Subsystem {
  /** Register with the background indexer; undefined when geo is off (disabled, or a store without documents). */
  readonly backend: IndexBackend | undefined;
  readonly service: GeoService;
  /** For the compaction daemon. */
  readonly files: GeoIndexFiles;
  readonly manager: GeoIndexManager;
}

/** Geo reads each db's changes and documents: a store without the document port cannot have it. */
const geoStoreOf = (store: CompactionStore): GeoStore | undefined => {
  const candidate = store as Partial<GeoStore>;
  return typeof candidate.changes === "function" && typeof candidate.getDoc === "function" && typeof candidate.currentSeq === "function" ? (candidate as GeoStore) : undefined;
};

/** For a store without documents: geo calls fail with that reason (no routes or backend are offered anyway). */
const refusingStore = (store: CompactionStore): GeoStore => {
  const refuse = (): Promise<never> => Promise.reject(Object.assign(new Error("this store cannot read documents: geo needs the DocumentStore port"), { transient: false }));
  return Object.assign(Object.create(store) as CompactionStore, { changes: refuse, getDoc: refuse, currentSeq: refuse });
};

export function geoSubsystem(deps: GeoSubsystemDeps): GeoSubsystem {
  const { logger } = deps;
  const indexDir = deps.indexDir ?? deps.settings.indexDir;
  const documents = geoStoreOf(deps.store);
  const enabled = (deps.enabled ?? deps.settings.enabled) && documents !== undefined;
  const store = documents ?? refusingStore(deps.store);
  let ownFactory: SandboxFactory | undefined;
  // Created on first use: no st_indexes, no sandbox thread.
  const sandboxes = new SandboxCache(() => deps.sandbox ?? (ownFactory ??= createSandboxFactory()), deps.sandboxLimits, deps.maxSandboxes ?? 16);
  const manager = new GeoIndexManager({ store, sandboxes, storage: indexDir === undefined ? memoryStorage() : directoryStorage(indexDir), logger, pageDocs: deps.pageDocs });
  const service = createGeoService({ store, manager, logger, onQuery: deps.onQuery });
  return {
    name: "geo",
    backend: enabled ? createGeoBackend(store, manager) : undefined,
    service,
    files: geoIndexFiles(manager),
    manager,
    start: async () => {
      if (documents === undefined) logger.info({}, "geo: this store cannot read documents (no DocumentStore port): st_indexes are not built");
    },
    stop: async () => sandboxes.close(),
    handleStoreEvent(event) {
      if (event.type !== "db-deleted") return;
      manager.dropDb(event.db).catch((error: unknown) => logger.warn({ db: event.db, err: errorText(error) }, "geo: dropping the indexes of a deleted db failed"));
    },
    routes: enabled ? [geoRoutes(service)] : [],
    status: () => ({ enabled, durable: manager.storage.durable, indexDir, ...manager.counters }),
    metrics: () => ({ ...manager.counters }),
  };
}
