/**
 * The CouchDB HTTP adapter: a real CouchDB 3.x (or 2.x, or PouchDB Server, with
 * the degradations in docs/couchdb.md) behind the store and event-source ports.
 *
 *   createCouchStore(options) -> { store, events, close, status }
 */
import type { EventSource } from "../../ports/events.js";
import type { Logger, Scheduler, StatePort } from "../../ports/shell.js";
import type { DbListing, Store } from "../../ports/store.js";
import type { DdocCheckSettings } from "../../core/shared/design-doc-checks.js";
import { CouchClient, type CouchAuth, type RetryOptions } from "./client.js";
import { CompactedSeqs } from "./compacted-seq.js";
import { CouchEventSource } from "./events.js";
import type { HealthSnapshot } from "./health.js";
import { CouchStore, type Granularity, type ServerCapabilities } from "./store.js";
import { realScheduler } from "./timers.js";

export { CouchHttpError, CouchUnavailableError, CouchDecodeError } from "./errors.js";
export { redactUrl } from "./redact.js";
export type { CouchAuth, Granularity };

export interface CouchStoreOptions {
  /** `http://user:pass@host:5984/prefix`; credentials in the URL are used for basic auth and never logged. */
  readonly url: string;
  /** Overrides URL credentials. `session: true` logs in with `POST /_session` and refreshes on 401. */
  readonly auth?: CouchAuth | undefined;
  /** PEM CA for https servers with a private CA. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer> | undefined;
  readonly logger: Logger;
  /** Persists the `_db_updates` seq, polling seqs, design doc revs and compacted seqs. */
  readonly state?: StatePort | undefined;
  readonly scheduler?: Scheduler | undefined;
  readonly random?: (() => number) | undefined;
  /** `database` (default) or `shard` (per shard file on every node, as CouchDB's own smoosh). */
  readonly granularity?: Granularity | undefined;
  /** Polling fallback interval (default 10 000 ms). */
  readonly pollIntervalMs?: number | undefined;
  /** How often a running compaction is checked (default 1 000 ms). */
  readonly jobPollIntervalMs?: number | undefined;
  /**
   * Keys per `POST /_dbs_info` (default 100): the server's `[chttpd]
   * max_db_number_for_dbs_info_req`. A server that refuses as many
   * (`too_many_keys`) is asked for fewer until its exact limit is found
   * (dbs-info-limit.ts), with a warning.
   */
  readonly dbsInfoMaxKeys?: number | undefined;
  /** `_db_updates` heartbeat (default 10 000 ms); the feed reconnects after 3 missed ones. */
  readonly heartbeatMs?: number | undefined;
  /** Per request (default 30 000 ms). */
  readonly requestTimeoutMs?: number | undefined;
  readonly retry?: Partial<RetryOptions> | undefined;
  /** Skip `_db_updates` and poll (e.g. a server whose feed is known to be broken). */
  readonly forcePolling?: boolean | undefined;
  /** Design doc re-listing after writes: at most every `minIntervalMs`, backing off to `maxIntervalMs`. Default 2 s to 60 s. */
  readonly ddocChecks?: DdocCheckSettings | undefined;
}

export interface CouchStoreStatus {
  readonly server: string;
  readonly health: HealthSnapshot;
  readonly capabilities: ServerCapabilities;
  /** Dbs per `POST /_dbs_info` now: the configured number, or less once the server refused it (too_many_keys). */
  readonly dbsInfoKeysPerRequest: number;
  readonly granularity: Granularity;
  readonly requests: number;
  readonly retries: number;
}

export interface CouchStoreHandle {
  readonly store: Store & DbListing & Pick<CouchStore, "activeTasks" | "probe" | "serverDaemons">;
  readonly events: EventSource;
  status(): CouchStoreStatus;
  close(): Promise<void>;
}

export const createCouchStore = (options: CouchStoreOptions): CouchStoreHandle => {
  const scheduler = options.scheduler ?? realScheduler;
  const random = options.random ?? Math.random;
  const granularity = options.granularity ?? "database";
  const client = new CouchClient({
    url: options.url,
    auth: options.auth,
    ca: options.ca,
    logger: options.logger,
    scheduler,
    random,
    requestTimeoutMs: options.requestTimeoutMs,
    retry: options.retry,
  });
  const compactedSeqs = new CompactedSeqs(options.state, options.logger);
  const store = new CouchStore({
    client,
    compactedSeqs,
    logger: options.logger,
    scheduler,
    granularity,
    jobPollIntervalMs: options.jobPollIntervalMs ?? 1_000,
    dbsInfoMaxKeys: options.dbsInfoMaxKeys,
  });
  const events = new CouchEventSource({
    client,
    store,
    logger: options.logger,
    scheduler,
    state: options.state,
    pollIntervalMs: options.pollIntervalMs ?? 10_000,
    heartbeatMs: options.heartbeatMs ?? 10_000,
    reconnect: { baseMs: 250, capMs: 30_000 },
    random,
    forcePolling: options.forcePolling,
    ddocChecks: options.ddocChecks ?? { minIntervalMs: 2_000, maxIntervalMs: 60_000 },
  });
  return {
    store,
    events,
    status: () => ({
      server: client.label,
      health: client.health.snapshot(),
      capabilities: { ...store.capabilities },
      dbsInfoKeysPerRequest: store.dbInfosBatchSize,
      granularity,
      requests: client.stats.requests,
      retries: client.stats.retries,
    }),
    close: async () => {
      await events.stop();
      await client.close();
    },
  };
};
