/**
 * Which store upholster runs against: a CouchDB server when `[couchdb] url`
 * is set (by `--couch`, `COUCHDB_URL` or the INI file, in that order), else
 * the in-memory store (the embedded default, with an optional demo workload).
 * Nothing else in `run` depends on the choice.
 */
import { readFile } from "node:fs/promises";
import type { UpholsterConfig } from "../config/load.js";
import type { EventSource } from "../ports/events.js";
import type { CancelTimer, Logger, Scheduler, StatePort } from "../ports/shell.js";
import type { Store } from "../ports/store.js";
import type { Subsystem } from "../runtime/subsystem.js";
import { createMemoryStore } from "../adapters/memory/index.js";
import { createMemoryDocumentApi } from "../adapters/memory/document-api.js";
import { documentsSubsystem, viewStoreOf } from "../runtime/documents/subsystem.js";
import { createCouchStore, redactUrl, type CouchAuth, type CouchStoreHandle } from "../adapters/couchdb-http/index.js";
import { SERVER_DAEMONS_REREAD_MS } from "../adapters/couchdb-http/server-daemons-watch.js";
import { prepareDemo, type PreparedDemo } from "./demo.js";
import { createCouchDbAuthenticator, createLocalAuthenticator, type Authenticator } from "../http/auth/index.js";
import { mergeIni } from "../config/ini-file.js";
import type { RunAdmin } from "./first-run.js";
import type { IndexingSubsystemOptions } from "../runtime/indexing/subsystem.js";
import { tapViewQueries, type QueryTap } from "../runtime/indexing/query-tap.js";
import { createCouchIndexBackends } from "../adapters/couchdb-http/indexing/index.js";
import { clusteredDbOf } from "../adapters/couchdb-http/shards.js";
import { configuredChannels } from "../core/compaction/index.js";

export interface StoreChoiceOptions {
  readonly config: UpholsterConfig;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  /** What must survive a restart (the CouchDB feed seq, compacted seqs). Always given to the CouchDB adapter. */
  readonly state: StatePort;
}

export interface StoreChoice {
  /** For the startup line: `memory ...`, `couchdb http://host:5984/ (events: polling)`; never with credentials. */
  describe(): string;
  readonly store: Store;
  readonly events: EventSource;
  /** Present only where a demo makes sense (the in-memory store). */
  readonly prepareDemo?: () => PreparedDemo;
  /**
   * Who is a server admin, for every protected route: on the in-memory
   * store, the `[admins]` section (CouchDB's password formats) plus
   * `runAdmin` (the first run's, see first-run.ts); against CouchDB,
   * CouchDB's own admins (asked through its `/_session`; `runAdmin` unused).
   */
  authenticator(runAdmin?: RunAdmin): Promise<Authenticator>;
  /** Extra status entries (`couchdb`: server health, event mode, request counts) for `/_upholster/status`. */
  readonly subsystems: readonly Subsystem[];
  /** How background indexing builds on this store: CouchDB's backends over HTTP; the memory store's own views by default. */
  readonly indexing: IndexingSubsystemOptions;
  /**
   * Keep geo indexes on disk by default (`<state_dir>/geo`): true for CouchDB,
   * whose data outlives upholster; false for the memory store, whose data
   * (and so any index of it) is gone when the process ends.
   */
  readonly geoIndexesOnDisk: boolean;
  /** View queries served by upholster (the memory store), reported to the indexer once it exists (queried indexes go first). */
  readonly queryTap?: QueryTap;
  /** Release the store's resources (connections) after upholster stopped. */
  close(): Promise<void>;
}

/** Thrown when the store cannot be set up (e.g. an unreadable `ca_file`); the message is for the user. */
export class StoreSetupError extends Error {
  override readonly name = "StoreSetupError";
}

export async function chooseStore(options: StoreChoiceOptions): Promise<StoreChoice> {
  const url = options.config.couchdb.url;
  return url === undefined ? chooseMemoryStore(options) : chooseCouchStore(options, url);
}

function chooseMemoryStore(options: StoreChoiceOptions): StoreChoice {
  const { scheduler, logger } = options;
  const store = createMemoryStore({ scheduler, model: { fileCompression: options.config.couchdb.fileCompression } });
  const views = viewStoreOf(store);
  const queryTap = views === undefined ? undefined : tapViewQueries(views);
  return {
    describe: () => "memory (in-process; data is lost on exit)",
    store,
    events: store.createEventSource(),
    prepareDemo: () => prepareDemo({ store, scheduler, logger }),
    authenticator: (runAdmin) => {
      const config = runAdmin === undefined ? options.config.ini : mergeIni(options.config.ini, { admins: { [runAdmin.name]: runAdmin.password } });
      return createLocalAuthenticator({ config, clock: scheduler, logger });
    },
    // CouchDB's document API over the embedded store (against CouchDB, CouchDB serves it).
    subsystems: [documentsSubsystem({ api: createMemoryDocumentApi({ store, timers: scheduler }), views: queryTap?.views, clock: scheduler })],
    indexing: {},
    geoIndexesOnDisk: false,
    ...(queryTap !== undefined ? { queryTap } : {}),
    // Ends the store's sandbox worker (its views' map functions).
    close: async () => store.close(),
  };
}

async function chooseCouchStore(options: StoreChoiceOptions, url: string): Promise<StoreChoice> {
  const { scheduler, logger, state } = options;
  const settings = options.config.couchdb;
  const server = redactUrl(url);
  const ca = settings.caFile === undefined ? undefined : await readCa(settings.caFile);
  const handle = createCouchStore({
    url,
    auth: settings.sessionAuth ? sessionAuthFrom(url) : undefined,
    ca,
    logger: logger.child?.({ store: "couchdb" }) ?? logger,
    state,
    scheduler,
    granularity: settings.granularity,
    pollIntervalMs: settings.pollIntervalMs,
    jobPollIntervalMs: settings.jobPollIntervalMs,
    dbsInfoMaxKeys: settings.dbsInfoMaxKeys,
    heartbeatMs: settings.heartbeatMs,
    requestTimeoutMs: settings.requestTimeoutMs,
    retry: { retries: settings.retries },
    forcePolling: settings.forcePolling,
    ddocChecks: { minIntervalMs: settings.ddocCheckIntervalMs, maxIntervalMs: Math.max(settings.ddocCheckIntervalMs, settings.ddocCheckMaxIntervalMs) },
  });
  // Views (and search, nouveau where the server has them) are built over HTTP, with their own client.
  const indexBackends = createCouchIndexBackends({
    url,
    auth: settings.sessionAuth ? sessionAuthFrom(url) : undefined,
    ca,
    logger: logger.child?.({ store: "couchdb" }) ?? logger,
    scheduler,
    retry: { retries: settings.retries },
  });
  // CouchDB's own smoosh and ken are warned about only where upholster does that work too.
  handle.store.serverDaemons.setOwnWork({
    compaction: configuredChannels(options.config.smoosh).some((channel) => channel.concurrency > 0),
    indexing: options.config.indexing.enabled,
  });
  return {
    describe: () => `couchdb ${server} (granularity ${settings.granularity}; events: ${handle.events.status().mode})`,
    store: handle.store,
    events: handle.events,
    // The client's own credentials are forwarded to CouchDB's `/_session`: upholster's URL credentials are not used.
    authenticator: async () => createCouchDbAuthenticator({ couchdbUrl: server, clock: scheduler }),
    subsystems: [couchStatusSubsystem(handle, scheduler)],
    indexing: { backends: indexBackends.backends, dbNameOf: clusteredDbOf },
    geoIndexesOnDisk: true,
    close: async () => {
      await handle.close();
      await indexBackends.close();
    },
  };
}

async function readCa(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new StoreSetupError(`[couchdb] ca_file = ${JSON.stringify(path)}: cannot read it (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** `session_auth = true`: the URL's user and password log in through `POST /_session` instead of basic auth. */
function sessionAuthFrom(url: string): CouchAuth | undefined {
  const parsed = new URL(url);
  if (parsed.username === "") return undefined;
  return { username: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password), session: true };
}

/**
 * Not a worker: a status entry, so `/_upholster/status` shows the server's
 * health (`reachable` / `outage`) and the event mode next to smoosh's queues.
 * It also asks whether CouchDB's own smoosh and ken run (they would compact
 * and index beside upholster): at start, every `SERVER_DAEMONS_REREAD_MS`
 * while it runs (an operator who switches one on later is warned without
 * reading the status), and when the status is read a minute after the last
 * read (answered or not).
 */
export function couchStatusSubsystem(handle: CouchStoreHandle, scheduler: Scheduler): Subsystem {
  const { store } = handle;
  // Which server this is (vendor, version) is asked once, at start and again from status until it answered (a server down then).
  // Its own daemons are asked after that: PouchDB Server has none.
  const probe = (): void =>
    void store
      .probe()
      .then(() => store.serverDaemons.check(handle.status().capabilities.vendor))
      .catch(() => undefined);
  const status = () => {
    const s = handle.status();
    if (s.capabilities.vendor === "unknown" || store.serverDaemons.stale) probe();
    const events = handle.events.status();
    return {
      server: s.server,
      health: s.health.reachable ? "reachable" : "outage",
      healthSince: new Date(s.health.sinceMs).toISOString(),
      ...(s.health.lastError !== undefined ? { lastError: s.health.lastError } : {}),
      events: events.mode,
      eventsConnected: events.connected,
      granularity: s.granularity,
      vendor: s.capabilities.vendor,
      ...(s.capabilities.version !== undefined ? { version: s.capabilities.version } : {}),
      dbsInfo: s.capabilities.dbsInfo,
      dbsInfoKeysPerRequest: s.dbsInfoKeysPerRequest,
      serverDaemons: store.serverDaemons.status(),
      requests: s.requests,
      retries: s.retries,
    };
  };
  let cancelReread: CancelTimer | undefined;
  const rereadLater = (): void => {
    cancelReread = scheduler.setTimeout(() => {
      if (store.serverDaemons.stale) probe();
      rereadLater();
    }, SERVER_DAEMONS_REREAD_MS);
  };
  return {
    name: "couchdb",
    start: async () => {
      probe();
      cancelReread?.();
      rereadLater();
    },
    stop: async () => {
      cancelReread?.();
      cancelReread = undefined;
    },
    handleStoreEvent: () => undefined,
    routes: [],
    status,
    metrics: () => {
      const s = handle.status();
      return { requests: s.requests, retries: s.retries };
    },
  };
}
