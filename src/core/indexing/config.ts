/**
 * Background indexing configuration, from CouchDB's INI sections:
 *
 * - `[ken]` (CouchDB 3's ken): `batch_channels` (20), `incremental_channels`
 *   (80), `max_incremental_updates` (1000), and the seed's `delay` (5000 ms),
 *   `batch_size` (1), `prune_interval` (60000 ms);
 * - `[ken.ignore]`: `<db> = true`;
 * - `[fabric]` (CouchDB 4's index builder): `index_updater_enabled`,
 *   `index_updater_delay_msec`, `index_updater_resolution_msec`,
 *   `index_updater_remove_old_indices`;
 * - `[query_servers]`, `[native_query_servers]`: the languages built
 *   (their keys, on top of CouchDB's defaults `javascript` and `query`).
 *
 * upholster's own keys live in `[ken]` and are marked "upholster extension".
 * Where upholster's default differs from CouchDB's it says why. Every bad
 * value is reported (section, key, value), all at once.
 */
import type * as t from "io-ts";
import type { Either } from "fp-ts/lib/Either.js";
import {
  BooleanFromString,
  NonNegIntFromString,
  PosIntFromString,
  orErrors,
  readValue,
  type ConfigError,
  type IniSections,
} from "../shared/ini.js";

export const KEN_SECTION = "ken";
export const KEN_IGNORE_SECTION = "ken.ignore";
export const FABRIC_SECTION = "fabric";
export const QUERY_SERVER_SECTIONS = ["query_servers", "native_query_servers"] as const;

/** CouchDB 3.4's default query servers: couchjs, and mango's native `query`. */
export const DEFAULT_LANGUAGES: readonly string[] = ["javascript", "query"];

export interface IndexingConfig {
  /** `[fabric] index_updater_enabled`: false stops starting anything (running builds finish). */
  readonly enabled: boolean;
  /** `[fabric] index_updater_delay_msec`: a db waits this long after its FIRST pending update. */
  readonly delayMs: number;
  /** `[fabric] index_updater_resolution_msec`: pending dbs are swept at most this often (plus jitter). */
  readonly resolutionMs: number;
  /** `[fabric] index_updater_remove_old_indices`: clean stale index files after a design doc change. */
  readonly removeOldIndices: boolean;
  /** `[ken] batch_channels`: any job may start while fewer than this many run. */
  readonly batchChannels: number;
  /** `[ken] incremental_channels`: beyond the batch channels, only small backlogs. */
  readonly incrementalChannels: number;
  /** `[ken] max_incremental_updates`: "small" for the incremental channels. */
  readonly maxIncrementalUpdates: number;
  /** `[ken] batch_size`: changes since a job's last run that let it run again in a batch channel. */
  readonly batchSize: number;
  /** `[ken] delay`: ms after which a job that ran before may run again whatever its backlog; finished entries are pruned after it. */
  readonly kenDelayMs: number;
  /** `[ken] prune_interval`: ms between prunes of the job table. */
  readonly pruneIntervalMs: number;
  /** upholster extension: start again as soon as there is room (false: the seed's 60 s resubmit, for comparison). */
  readonly catchUp: boolean;
  /** upholster extension: capped exponential back-off after a failure. */
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  /** upholster extension: non-transient failures are retried this often, then only when the db changes again. */
  readonly retryMaxAttempts: number;
  /** upholster extension (seed behaviour, `catch_up = false`): a refused db is resubmitted after this. */
  readonly resubmitRefusedMs: number;
  /** upholster extension (seed behaviour): a failed db is resubmitted after this. */
  readonly resubmitFailedMs: number;
  /** upholster extension: dbs inspected at once (ken: one db worker). */
  readonly maxInspections: number;
  /** upholster extension: look at every db when starting and after the event source may have missed events. */
  readonly scanOnStart: boolean;
  /** upholster extension: bound on dbs waiting (pending or queued). */
  readonly maxQueuedDbs: number;
  /** upholster extension: bound on indexes waiting for a channel. */
  readonly maxWaitingIndexes: number;
  /** upholster extension: a build that reports no progress for this long fails (transient) and is retried. */
  readonly buildTimeoutMs: number;
  /** upholster extension: a recently queried index counts as having waited this much longer. */
  readonly queryBoostMs: number;
  /** upholster extension: a query is recent for this long. */
  readonly queryWindowMs: number;
  /** upholster extension: an operator-prioritized index counts as having waited this much longer. */
  readonly hintBoostMs: number;
  /** upholster extension: a staged design doc is swapped in once its indexes are at most this far behind. */
  readonly deployMaxLag: number;
  /** upholster extension: how often a deploy's stage is checked while it builds. */
  readonly deployCheckMs: number;
  /** upholster extension: finished deploys kept for status. */
  readonly deployKeep: number;
  /** `[ken.ignore] <db> = true`. */
  readonly ignoredDbs: readonly string[];
  /** Languages built: `[query_servers]` and `[native_query_servers]` keys, plus CouchDB's defaults. */
  readonly allowedLanguages: readonly string[];
}

/**
 * upholster's defaults. CouchDB's where they make sense; the three
 * `[fabric]` values differ on purpose (see the README's "Where upholster
 * differs"): the RFC's 60 s delay and 10 s resolution would make "fresh
 * within 2 s of a burst" impossible, and stale index files are removed.
 */
export const defaultIndexingConfig: IndexingConfig = {
  enabled: true,
  delayMs: 250,
  resolutionMs: 100,
  removeOldIndices: true,
  batchChannels: 20,
  incrementalChannels: 80,
  maxIncrementalUpdates: 1000,
  batchSize: 1,
  kenDelayMs: 5000,
  pruneIntervalMs: 60_000,
  catchUp: true,
  retryInitialMs: 1000,
  retryMaxMs: 60_000,
  retryMaxAttempts: 10,
  resubmitRefusedMs: 60_000,
  resubmitFailedMs: 5000,
  maxInspections: 4,
  scanOnStart: true,
  maxQueuedDbs: 100_000,
  maxWaitingIndexes: 100_000,
  buildTimeoutMs: 600_000,
  queryBoostMs: 60_000,
  queryWindowMs: 300_000,
  hintBoostMs: 600_000,
  deployMaxLag: 1000,
  deployCheckMs: 1000,
  deployKeep: 20,
  ignoredDbs: [],
  allowedLanguages: DEFAULT_LANGUAGES,
};

const readKen = (ini: IniSections, key: string, codec: t.Decoder<unknown, number>, fallback: number, errors: ConfigError[]): number =>
  readValue(ini, KEN_SECTION, key, codec, fallback, errors);

const readFabric = <A>(ini: IniSections, key: string, codec: t.Decoder<unknown, A>, fallback: A, errors: ConfigError[]): A =>
  readValue(ini, FABRIC_SECTION, key, codec, fallback, errors);

const ignoredOf = (ini: IniSections, errors: ConfigError[]): string[] => {
  const section = ini[KEN_IGNORE_SECTION] ?? {};
  const ignored: string[] = [];
  for (const db of Object.keys(section)) {
    if (readValue(ini, KEN_IGNORE_SECTION, db, BooleanFromString, false, errors)) ignored.push(db);
  }
  return ignored.sort();
};

const languagesOf = (ini: IniSections): string[] => {
  const configured = QUERY_SERVER_SECTIONS.flatMap((section) => Object.keys(ini[section] ?? {}));
  return [...new Set([...DEFAULT_LANGUAGES, ...configured])].sort();
};

/** `[ken]`, `[ken.ignore]`, `[fabric] index_updater_*` and the query server sections. */
export function decodeIndexingConfig(ini: IniSections): Either<ConfigError[], IndexingConfig> {
  const errors: ConfigError[] = [];
  const d = defaultIndexingConfig;
  const ken = (key: string, fallback: number, codec: t.Decoder<unknown, number> = NonNegIntFromString): number => readKen(ini, key, codec, fallback, errors);
  const pruneIntervalMs = ken("prune_interval", d.pruneIntervalMs, PosIntFromString);
  // The seed's `set_prune_interval` refuses 1000 ms or less.
  const rawPrune = ini[KEN_SECTION]?.["prune_interval"];
  if (rawPrune !== undefined && pruneIntervalMs <= 1000) {
    errors.push({ section: KEN_SECTION, key: "prune_interval", value: rawPrune, message: "expected more than 1000 (ms)" });
  }
  const retryInitialMs = ken("retry_initial_msec", d.retryInitialMs, PosIntFromString);
  const config: IndexingConfig = {
    enabled: readFabric(ini, "index_updater_enabled", BooleanFromString, d.enabled, errors),
    delayMs: readFabric(ini, "index_updater_delay_msec", NonNegIntFromString, d.delayMs, errors),
    resolutionMs: readFabric(ini, "index_updater_resolution_msec", PosIntFromString, d.resolutionMs, errors),
    removeOldIndices: readFabric(ini, "index_updater_remove_old_indices", BooleanFromString, d.removeOldIndices, errors),
    batchChannels: ken("batch_channels", d.batchChannels),
    incrementalChannels: ken("incremental_channels", d.incrementalChannels),
    maxIncrementalUpdates: ken("max_incremental_updates", d.maxIncrementalUpdates),
    batchSize: ken("batch_size", d.batchSize, PosIntFromString),
    kenDelayMs: ken("delay", d.kenDelayMs),
    pruneIntervalMs,
    catchUp: readValue(ini, KEN_SECTION, "catch_up", BooleanFromString, d.catchUp, errors),
    retryInitialMs,
    retryMaxMs: Math.max(retryInitialMs, ken("retry_max_msec", d.retryMaxMs, PosIntFromString)),
    retryMaxAttempts: ken("retry_max_attempts", d.retryMaxAttempts),
    resubmitRefusedMs: ken("resubmit_refused_msec", d.resubmitRefusedMs),
    resubmitFailedMs: ken("resubmit_failed_msec", d.resubmitFailedMs),
    maxInspections: ken("max_inspections", d.maxInspections, PosIntFromString),
    scanOnStart: readValue(ini, KEN_SECTION, "scan_on_start", BooleanFromString, d.scanOnStart, errors),
    maxQueuedDbs: ken("max_queued_dbs", d.maxQueuedDbs, PosIntFromString),
    maxWaitingIndexes: ken("max_waiting_indexes", d.maxWaitingIndexes, PosIntFromString),
    buildTimeoutMs: ken("build_timeout_msec", d.buildTimeoutMs, PosIntFromString),
    queryBoostMs: ken("query_boost_msec", d.queryBoostMs),
    queryWindowMs: ken("query_window_msec", d.queryWindowMs),
    hintBoostMs: ken("hint_boost_msec", d.hintBoostMs),
    deployMaxLag: ken("deploy_max_lag", d.deployMaxLag),
    deployCheckMs: ken("deploy_check_msec", d.deployCheckMs, PosIntFromString),
    deployKeep: ken("deploy_keep", d.deployKeep),
    ignoredDbs: ignoredOf(ini, errors),
    allowedLanguages: languagesOf(ini),
  };
  return orErrors(errors, config);
}

/** Total channels: never more builds at once than this. */
export const totalChannels = (config: Pick<IndexingConfig, "batchChannels" | "incrementalChannels">): number => config.batchChannels + config.incrementalChannels;
