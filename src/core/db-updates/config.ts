/**
 * `[global_changes]` configuration, decoded from INI strings with io-ts.
 *
 * CouchDB keys: `max_event_delay` (ms, 25), `max_write_delay` (ms, 500 in
 * CouchDB 3.x; 25 in the seed), `update_db` (true). upholster adds the name
 * of its feed db, bounds/retry settings and reconciliation (units last in
 * their names).
 */
import * as t from "io-ts";
import {
  BooleanFromString,
  NonNegIntFromString,
  PosIntFromString,
  readValue,
  type ConfigError,
  type IniSections,
} from "../shared/ini.js";

export const GLOBAL_CHANGES_SECTION = "global_changes";

export interface DbUpdatesConfig {
  /** false: events are dropped and pending state cleared (as CouchDB). */
  readonly updateDb: boolean;
  /** Listener batch window (ms). */
  readonly maxEventDelayMs: number;
  /** Writer batch window (ms). */
  readonly maxWriteDelayMs: number;
  /** The feed db. Must be a legal CouchDB name: not `_global_changes`, which CouchDB reserves for itself. */
  readonly dbName: string;
  /** Bound on distinct keys held in memory (listener and writer each); see docs/db-updates.md for the overflow policy. */
  readonly maxPendingKeys: number;
  /** Most docs per `_bulk_docs` call. */
  readonly maxWriteBatch: number;
  /** Capped exponential back-off for failed writes. */
  readonly retryInitialDelayMs: number;
  readonly retryMaxDelayMs: number;
  /** Feed readers re-check the store this often when no in-process notification came (another writer, e.g. a second upholster). */
  readonly pollIntervalMs: number;
  /** A streaming client whose unsent output exceeds this is disconnected (a slow client must not hold memory). */
  readonly maxClientBufferBytes: number;
  /** A streaming client that takes nothing for this long is disconnected (it must not pin a feed reader forever). */
  readonly clientDrainTimeoutMs: number;
  /**
   * Reconciliation (upholster's): after the event source may have missed
   * events (a reconnect, a dropped batch) and at start, the server's db list is
   * walked and the missed events are emitted. At most this many store calls
   * per second (`_all_dbs` pages and `_dbs_info` batches); 0 turns it off.
   */
  readonly reconcileRequestsPerSec: number;
  /** Dbs per `_all_dbs` page (their seqs are read 100 per `_dbs_info` call). */
  readonly reconcilePageSize: number;
  /** Bound on the dbs upholster remembers (seq per db); beyond it new dbs are untracked (counted). */
  readonly reconcileMaxDbs: number;
}

const shared = {
  updateDb: true,
  dbName: "upholster_global_changes",
  maxPendingKeys: 100_000,
  maxWriteBatch: 1_000,
  retryInitialDelayMs: 100,
  retryMaxDelayMs: 5_000,
  pollIntervalMs: 1_000,
  maxClientBufferBytes: 1_048_576,
  clientDrainTimeoutMs: 60_000,
  reconcileRequestsPerSec: 10,
  reconcilePageSize: 100,
  reconcileMaxDbs: 100_000,
} as const;

/** CouchDB 3.4's timing: events wait up to 25 ms in the listener, then up to 500 ms in the writer. */
export const COUCHDB_DEFAULTS: DbUpdatesConfig = { ...shared, maxEventDelayMs: 25, maxWriteDelayMs: 500 };

/**
 * upholster's defaults: the seed's 25 ms write window instead of CouchDB's
 * 500 ms. The writer still batches (one `_bulk_docs` per window, keys
 * collapsed), so write load stays bounded while events arrive ~20x sooner
 * (measured by `npm run bench:db-updates`).
 */
export const UPHOLSTER_DEFAULTS: DbUpdatesConfig = { ...shared, maxEventDelayMs: 25, maxWriteDelayMs: 25 };

/** CouchDB db names; `_`-names are CouchDB's own system dbs. */
export const COUCHDB_DB_NAME = /^[a-z][a-z0-9_$()+/-]*$/;

const FeedDbName = new t.Type<string, string, unknown>(
  "a CouchDB database name (^[a-z][a-z0-9_$()+/-]*$; names starting with _ are reserved by CouchDB)",
  (u): u is string => typeof u === "string" && COUCHDB_DB_NAME.test(u),
  (u, c) => (typeof u === "string" && COUCHDB_DB_NAME.test(u) ? t.success(u) : t.failure(u, c)),
  t.identity,
);

export interface DecodedConfig {
  readonly config: DbUpdatesConfig;
  /** Rejected values; each falls back to its default so one bad key never stops the feed. */
  readonly errors: readonly ConfigError[];
}

export function decodeDbUpdatesConfig(ini: IniSections, defaults: DbUpdatesConfig = UPHOLSTER_DEFAULTS): DecodedConfig {
  const errors: ConfigError[] = [];
  const s = GLOBAL_CHANGES_SECTION;
  const config: DbUpdatesConfig = {
    updateDb: readValue(ini, s, "update_db", BooleanFromString, defaults.updateDb, errors),
    maxEventDelayMs: readValue(ini, s, "max_event_delay", NonNegIntFromString, defaults.maxEventDelayMs, errors),
    maxWriteDelayMs: readValue(ini, s, "max_write_delay", NonNegIntFromString, defaults.maxWriteDelayMs, errors),
    dbName: readValue(ini, s, "db_name", FeedDbName, defaults.dbName, errors),
    maxPendingKeys: readValue(ini, s, "max_pending_keys", PosIntFromString, defaults.maxPendingKeys, errors),
    maxWriteBatch: readValue(ini, s, "max_write_batch", PosIntFromString, defaults.maxWriteBatch, errors),
    retryInitialDelayMs: readValue(ini, s, "retry_initial_delay_ms", PosIntFromString, defaults.retryInitialDelayMs, errors),
    retryMaxDelayMs: readValue(ini, s, "retry_max_delay_ms", PosIntFromString, defaults.retryMaxDelayMs, errors),
    pollIntervalMs: readValue(ini, s, "poll_interval_ms", PosIntFromString, defaults.pollIntervalMs, errors),
    maxClientBufferBytes: readValue(ini, s, "max_client_buffer_bytes", PosIntFromString, defaults.maxClientBufferBytes, errors),
    clientDrainTimeoutMs: readValue(ini, s, "client_drain_timeout_ms", PosIntFromString, defaults.clientDrainTimeoutMs, errors),
    reconcileRequestsPerSec: readValue(ini, s, "reconcile_requests_per_sec", NonNegIntFromString, defaults.reconcileRequestsPerSec, errors),
    reconcilePageSize: readValue(ini, s, "reconcile_page_size", PosIntFromString, defaults.reconcilePageSize, errors),
    reconcileMaxDbs: readValue(ini, s, "reconcile_max_dbs", PosIntFromString, defaults.reconcileMaxDbs, errors),
  };
  if (config.retryMaxDelayMs < config.retryInitialDelayMs) {
    errors.push({
      section: s,
      key: "retry_max_delay_ms",
      value: String(config.retryMaxDelayMs),
      message: `must be at least retry_initial_delay_ms (${config.retryInitialDelayMs})`,
    });
    return { config: { ...config, retryMaxDelayMs: config.retryInitialDelayMs }, errors };
  }
  return { config, errors };
}
