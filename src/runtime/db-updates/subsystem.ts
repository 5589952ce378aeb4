/**
 * The db updates feed (global_changes, `/_db_updates`) as one of upholster's
 * subsystems: config, service, reconciler, HTTP routes. Store events reach the
 * service through `handleStoreEvent`; `routes` are mounted on upholster's
 * server. Where the store can list its dbs in pages (`DbListing`), the
 * reconciler makes the feed complete: whatever the event source missed
 * (`source-resumed`), or the writer dropped, is found and emitted.
 */
import { formatConfigError, type IniSections } from "../../core/shared/ini.js";
import { decodeDbUpdatesConfig, type DbUpdatesConfig } from "../../core/db-updates/index.js";
import type { StoreEvent } from "../../ports/events.js";
import type { Logger, Scheduler, StatePort } from "../../ports/shell.js";
import type { DbListing, DocumentStore } from "../../ports/store.js";
import { createMemoryStatePort } from "../../adapters/state/index.js";
import type { RouteHandler } from "../../http/types.js";
import type { Authenticator } from "../../http/auth/types.js";
import type { LocalAuthenticator } from "../../http/auth/local-authenticator.js";
import { createSessionHandler } from "../../http/auth/session-handler.js";
import { createDbUpdatesHandler } from "../../http/db-updates/handler.js";
import type { Subsystem } from "../subsystem.js";
import { KnownDbs } from "./known-dbs.js";
import { createReconciler, type Reconciler, type ReconcilerMetrics, type ReconcilerStatus } from "./reconciler.js";
import { createDbUpdatesService, type DbUpdatesMetrics, type DbUpdatesService } from "./service.js";

export interface DbUpdatesSubsystemOptions {
  /** With `DbListing` (the memory store, CouchDB, PouchDB Server) the feed reconciles; without, it only relays events. */
  readonly store: DocumentStore & Partial<DbListing>;
  readonly scheduler: Scheduler;
  /** All INI sections; `[global_changes]` is read. */
  readonly config: IniSections;
  readonly logger: Logger;
  readonly authenticator: Authenticator | LocalAuthenticator;
  /** Where what upholster knows of the dbs survives restarts. Default: memory (every start is a first start). */
  readonly state?: StatePort | undefined;
  /** Base defaults before the INI (e.g. `COUCHDB_DEFAULTS` for CouchDB's timing). Default `UPHOLSTER_DEFAULTS`. */
  readonly defaults?: DbUpdatesConfig;
}

export type DbUpdatesSubsystemMetrics = DbUpdatesMetrics & Partial<ReconcilerMetrics>;

export interface DbUpdatesSubsystem extends Subsystem {
  readonly service: DbUpdatesService;
  /** `/_db_updates`, plus `/_session` when the authenticator is the local one. */
  readonly routes: RouteHandler[];
  readonly config: DbUpdatesConfig;
  /** Undefined when reconciliation is off (no `DbListing`, `reconcile_requests_per_sec = 0`, `update_db = false`). */
  readonly reconciler: Reconciler | undefined;
  status(): { readonly feedDb: string; readonly reconcile?: ReconcilerStatus | undefined };
  metrics(): DbUpdatesSubsystemMetrics;
}

/** The knowledge and cursor are saved at most this often (and at the end of each pass, and at stop). */
export const RECONCILE_CHECKPOINT_INTERVAL_MS = 5_000;

const isLocal = (a: Authenticator | LocalAuthenticator): a is LocalAuthenticator => "login" in a && "issueCookie" in a;

const listingOf = (store: DocumentStore & Partial<DbListing>): DbListing | undefined => {
  const { listDbsAfter, dbUpdateSeqs } = store;
  if (listDbsAfter === undefined || dbUpdateSeqs === undefined) return undefined;
  return {
    listDbsAfter: listDbsAfter.bind(store),
    dbUpdateSeqs: dbUpdateSeqs.bind(store),
    // Read when asked: a CouchDB store learns a smaller `_dbs_info` batch from the server.
    get dbInfosBatchSize() {
      return store.dbInfosBatchSize;
    },
  };
};

export function dbUpdatesSubsystem(options: DbUpdatesSubsystemOptions): DbUpdatesSubsystem {
  const logger = options.logger.child?.({ subsystem: "db_updates" }) ?? options.logger;
  const { config, errors } = decodeDbUpdatesConfig(options.config, options.defaults);
  for (const e of errors) logger.warn({ section: e.section, key: e.key, value: e.value }, `ignoring bad config value: ${formatConfigError(e)}`);
  const listing = listingOf(options.store);
  const reconciling = listing !== undefined && config.reconcileRequestsPerSec > 0 && config.updateDb;
  let reconciler: Reconciler | undefined;
  const known = reconciling
    ? new KnownDbs({ state: options.state ?? createMemoryStatePort(), logger, maxDbs: config.reconcileMaxDbs, onDirty: () => reconciler?.knowledgeChanged(), onAmbiguous: (db) => reconciler?.recheck(db) })
    : undefined;
  const service = createDbUpdatesService({
    store: options.store,
    scheduler: options.scheduler,
    config,
    logger,
    journal: known,
    onDropped: () => reconciler?.request("the feed's writer dropped events (max_pending_keys)"),
  });
  if (listing !== undefined && known !== undefined) {
    reconciler = createReconciler({
      listing,
      known,
      target: service,
      scheduler: options.scheduler,
      logger,
      settings: {
        pageSize: config.reconcilePageSize,
        requestsPerSec: config.reconcileRequestsPerSec,
        maxDbs: config.reconcileMaxDbs,
        feedDbName: config.dbName,
        retryInitialDelayMs: config.retryInitialDelayMs,
        retryMaxDelayMs: config.retryMaxDelayMs,
        checkpointIntervalMs: RECONCILE_CHECKPOINT_INTERVAL_MS,
      },
    });
  }
  const routes: RouteHandler[] = [
    createDbUpdatesHandler({
      service,
      authenticator: options.authenticator,
      scheduler: options.scheduler,
      logger,
      maxClientBufferBytes: config.maxClientBufferBytes,
      storeRetryMs: config.pollIntervalMs,
      drainTimeoutMs: config.clientDrainTimeoutMs,
    }),
  ];
  if (isLocal(options.authenticator)) routes.push(createSessionHandler(options.authenticator, options.scheduler));
  const handleStoreEvent = (event: StoreEvent): void => {
    if (event.type === "source-resumed") return reconciler?.request(event.reason);
    reconciler?.noteLiveEvent(event.db);
    service.handleStoreEvent(event);
  };
  return {
    name: "db_updates",
    service,
    routes,
    config,
    reconciler,
    async start() {
      await service.start();
      await reconciler?.start();
    },
    async stop() {
      await reconciler?.halt();
      await service.stop();
      await reconciler?.saveNow();
    },
    handleStoreEvent,
    status: () => ({ feedDb: service.feedDbName, ...(reconciler === undefined ? {} : { reconcile: reconciler.status() }) }),
    metrics: () => ({ ...service.metrics(), ...reconciler?.metrics() }),
  };
}
