/**
 * `[smoosh]`, `[smoosh.<channel>]` and `[smoosh.ignore]` decoded into typed
 * config. Keys and defaults are CouchDB 3.4's; upholster's own keys are marked
 * "upholster extension". Every bad value is reported (section, key, value),
 * all of them at once.
 */
import * as t from "io-ts";
import type { Either } from "fp-ts/lib/Either.js";
import {
  BooleanFromString,
  CsvFromString,
  isInheritedName,
  NonNegIntFromString,
  NumberOrInfinityFromString,
  PosIntFromString,
  PosNumberFromString,
  orErrors,
  readValue,
  type ConfigError,
  type IniSections,
} from "../shared/ini.js";
import type { ChannelKind } from "./types.js";
import { parseClock, type TimeWindow } from "./window.js";
import { DEFAULT_DBS_PER_INFO_REQUEST } from "./check-budget.js";

export type PriorityMethod = "ratio" | "slack" | "upgrade";

export interface ChannelConfig {
  readonly name: string;
  readonly kind: ChannelKind;
  /** How sizes become a priority. Cleanup channels ignore it (a cleanup always has priority 1). */
  readonly priority: PriorityMethod;
  readonly minPriority: number;
  readonly maxPriority: number;
  readonly minSizeBytes: number;
  readonly maxSizeBytes: number;
  /** Dbs only: changes since the last compaction needed before it is worth it. */
  readonly minChanges: number;
  readonly capacity: number;
  /** 0 disables the channel's starts (its queue still fills). */
  readonly concurrency: number;
  /** Undefined: always open. */
  readonly window: TimeWindow | undefined;
  /** Suspend running jobs when the window closes, resume them when it opens. */
  readonly strictWindow: boolean;
}

export interface SmooshConfig {
  /** Exactly the channels that run, in the order they are tried. */
  readonly dbChannels: readonly string[];
  /** View index groups, and geo index files (object.ts, `channelKindOf`). */
  readonly viewChannels: readonly string[];
  readonly cleanupChannels: readonly string[];
  readonly channels: Readonly<Record<string, ChannelConfig>>;
  /** The seed's meaning: an object already queued is not re-checked within this many minutes. */
  readonly stalenessMinutes: number;
  readonly waitSecs: number;
  readonly cleanupIndexFiles: boolean;
  readonly persist: boolean;
  /** Where the shell keeps the persisted queues; the core does not use it. */
  readonly stateDir: string | undefined;
  /** upholster extension: re-check every db and view this often; 0 = off. */
  readonly rescanIntervalSecs: number;
  /** upholster extension: back-off after a failed job. */
  readonly retryInitialSecs: number;
  readonly retryMaxSecs: number;
  /** 0 = retry forever. */
  readonly retryMaxAttempts: number;
  /** upholster extension: how often the snapshot is persisted (persist = true). */
  readonly checkpointSecs: number;
  /** upholster extension: info requests in flight (a batch of dbs is one). */
  readonly maxInfoRequests: number;
  /** upholster extension: objects tracked by the check policy (and dbs waiting for their design docs to be listed). */
  readonly maxPendingChecks: number;
  /** upholster extension: the global limit on check requests per second (one request: one info, or up to 100 dbs). */
  readonly checkRequestsPerSec: number;
  /** upholster extension: updates of one object within this many ms after its first cost one check. */
  readonly minCheckIntervalMs: number;
  /** upholster extension: a written object is looked at within this many seconds, whatever its prediction says. */
  readonly maxCheckIntervalSecs: number;
  /** `[smoosh.ignore] <db> = true`. */
  readonly ignoredDbs: readonly string[];
  /**
   * Not an INI key: set from the store (`CompactionStore.jobLookIntervalMs`).
   * A store that learns a db compaction's end only by reading the db's info
   * gets that read from the core this often, with the next start's precheck
   * in the same request (job-looks.ts). 0: the store watches its jobs alone.
   */
  readonly jobLookIntervalMs: number;
  /**
   * Not an INI key: set from the store (`CompactionStore.dbInfosBatchSize`,
   * on CouchDB its `[chttpd] max_db_number_for_dbs_info_req`). The most dbs
   * one check request carries: the budget's token pays for one request, so a
   * batch the server would split is never planned.
   */
  readonly dbsPerInfoRequest: number;
}

/**
 * upholster extension, on by default (hourly): without persistence a restart
 * forgets every queue, and CouchDB only re-enqueues a db when it is written
 * again, so a quiet db full of garbage was never compacted. One listing and
 * one bounded info fetch per object an hour is cheap; `rescan_interval = 0`
 * restores CouchDB's behaviour.
 */
export const DEFAULT_RESCAN_INTERVAL_SECS = 3600;

/**
 * upholster extension: check requests per second for the whole server. Each
 * can carry up to 100 dbs (`POST /_dbs_info`), so this bounds the cost of
 * watching 100,000 quiet dbs and 20 hot ones alike (see check-policy.ts).
 */
export const DEFAULT_CHECK_REQUESTS_PER_SEC = 1;

const SECTION = "smoosh";
const IGNORE_SECTION = "smoosh.ignore";

export const DEFAULT_DB_CHANNELS = ["upgrade_dbs", "ratio_dbs", "slack_dbs"] as const;
export const DEFAULT_VIEW_CHANNELS = ["upgrade_views", "ratio_views", "slack_views"] as const;
export const DEFAULT_CLEANUP_CHANNELS = ["index_cleanup"] as const;

/** CouchDB 3.4 defaults (the seed had 5.0 and 16 MiB; raised after #3047/#3019: idle nodes compacted at 100% CPU). */
export const DEFAULT_MIN_PRIORITY_RATIO = 2.0;
export const DEFAULT_MIN_PRIORITY_SLACK = 536870912;

/** The seed's `get_priority/1`: these names fix their method; `priority` is not read for them. */
const BUILT_IN_METHODS: Readonly<Record<string, PriorityMethod>> = {
  ratio_dbs: "ratio",
  ratio_views: "ratio",
  slack_dbs: "slack",
  slack_views: "slack",
  upgrade_dbs: "upgrade",
  upgrade_views: "upgrade",
};

const PriorityMethodFromString = t.keyof({ ratio: null, slack: null, upgrade: null }, "ratio, slack or upgrade");

const ClockFromString = new t.Type<number, string, unknown>(
  "a time HH:MM (UTC)",
  (u): u is number => typeof u === "number",
  (u, c) => {
    const minute = typeof u === "string" ? parseClock(u) : undefined;
    return minute === undefined ? t.failure(u, c) : t.success(minute);
  },
  (m) => `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`,
);

const decodeChannel = (ini: IniSections, name: string, kind: ChannelKind, errors: ConfigError[]): ChannelConfig => {
  const section = `smoosh.${name}`;
  const builtIn = BUILT_IN_METHODS[name];
  const priority: PriorityMethod =
    builtIn ?? readValue(ini, section, "priority", PriorityMethodFromString, "ratio", errors);
  const minPriority = readValue(
    ini,
    section,
    "min_priority",
    NumberOrInfinityFromString,
    priority === "slack" ? DEFAULT_MIN_PRIORITY_SLACK : DEFAULT_MIN_PRIORITY_RATIO,
    errors,
  );
  const fromMinute = readValue<number | undefined>(ini, section, "from", ClockFromString, undefined, errors);
  const toMinute = readValue<number | undefined>(ini, section, "to", ClockFromString, undefined, errors);
  return {
    name,
    kind,
    priority,
    minPriority,
    maxPriority: readValue(ini, section, "max_priority", NumberOrInfinityFromString, Infinity, errors),
    minSizeBytes: readValue(ini, section, "min_size", NumberOrInfinityFromString, 1048576, errors),
    maxSizeBytes: readValue(ini, section, "max_size", NumberOrInfinityFromString, Infinity, errors),
    minChanges: readValue(ini, section, "min_changes", NonNegIntFromString, 0, errors),
    capacity: readValue(ini, section, "capacity", PosIntFromString, 9999, errors),
    concurrency: readValue(ini, section, "concurrency", NonNegIntFromString, 1, errors),
    // As CouchDB: a missing `from` is 00:00, a missing `to` is 24:00.
    window:
      fromMinute === undefined && toMinute === undefined
        ? undefined
        : { fromMinute: fromMinute ?? 0, toMinute: toMinute ?? 1440 },
    strictWindow: readValue(ini, section, "strict_window", BooleanFromString, false, errors),
  };
};

const decodeIgnored = (ini: IniSections, errors: ConfigError[]): string[] =>
  Object.keys(ini[IGNORE_SECTION] ?? {}).filter((db) =>
    readValue(ini, IGNORE_SECTION, db, BooleanFromString, false, errors),
  );

/**
 * A channel name in two lists would share one queue for two kinds of object,
 * and an inherited name finds no channel where channels are looked up by name
 * (the config, the persisted queues): refuse both.
 */
const checkChannelNames = (ini: IniSections, lists: ReadonlyArray<readonly [string, readonly string[]]>, errors: ConfigError[]): void => {
  const seen = new Map<string, string>();
  for (const [key, names] of lists) {
    const inThisList = new Set<string>();
    for (const name of names) {
      if (isInheritedName(name)) {
        errors.push({ section: SECTION, key, value: ini[SECTION]?.[key] ?? names.join(","), message: `channel name ${JSON.stringify(name)} is reserved` });
        continue;
      }
      const other = seen.get(name);
      if (other !== undefined || inThisList.has(name)) {
        errors.push({
          section: SECTION,
          key,
          value: ini[SECTION]?.[key] ?? names.join(","),
          message: `channel ${JSON.stringify(name)} is already listed in ${other ?? key}`,
        });
      }
      inThisList.add(name);
      if (other === undefined) seen.set(name, key);
    }
  }
};

export const decodeSmooshConfig = (ini: IniSections): Either<ConfigError[], SmooshConfig> => {
  const errors: ConfigError[] = [];
  const read = <A>(key: string, codec: t.Decoder<unknown, A>, fallback: A): A =>
    readValue(ini, SECTION, key, codec, fallback, errors);
  // The configured lists are exactly what runs. CouchDB 3.3 started merging
  // the built-in channels back into them (#4378), so `db_channels = ratio_dbs`
  // no longer disabled the others; users complained. We do not merge.
  const dbChannels = read("db_channels", CsvFromString, DEFAULT_DB_CHANNELS);
  const viewChannels = read("view_channels", CsvFromString, DEFAULT_VIEW_CHANNELS);
  const cleanupChannels = read("cleanup_channels", CsvFromString, DEFAULT_CLEANUP_CHANNELS);
  checkChannelNames(ini, [["db_channels", dbChannels], ["view_channels", viewChannels], ["cleanup_channels", cleanupChannels]], errors);
  const channels: Record<string, ChannelConfig> = {};
  const kinds: ReadonlyArray<readonly [readonly string[], ChannelKind]> = [
    [dbChannels, "db"],
    [viewChannels, "view"],
    [cleanupChannels, "cleanup"],
  ];
  for (const [names, kind] of kinds) {
    for (const name of names) {
      if (!Object.hasOwn(channels, name) && !isInheritedName(name)) channels[name] = decodeChannel(ini, name, kind, errors);
    }
  }
  const stateDirRaw = ini[SECTION]?.["state_dir"];
  const config: SmooshConfig = {
    dbChannels,
    viewChannels,
    cleanupChannels,
    channels,
    stalenessMinutes: read("staleness", NonNegIntFromString, 5),
    waitSecs: read("wait_secs", NonNegIntFromString, 30),
    cleanupIndexFiles: read("cleanup_index_files", BooleanFromString, false),
    persist: read("persist", BooleanFromString, false),
    stateDir: stateDirRaw === undefined || stateDirRaw.trim() === "" ? undefined : stateDirRaw.trim(),
    rescanIntervalSecs: read("rescan_interval", NonNegIntFromString, DEFAULT_RESCAN_INTERVAL_SECS),
    retryInitialSecs: read("retry_initial_secs", PosIntFromString, 5),
    retryMaxSecs: read("retry_max_secs", PosIntFromString, 3600),
    retryMaxAttempts: read("retry_max_attempts", NonNegIntFromString, 10),
    checkpointSecs: read("checkpoint_secs", PosIntFromString, 60),
    maxInfoRequests: read("max_info_requests", PosIntFromString, 8),
    maxPendingChecks: read("max_pending_checks", PosIntFromString, 100000),
    checkRequestsPerSec: read("check_requests_per_sec", PosNumberFromString, DEFAULT_CHECK_REQUESTS_PER_SEC),
    minCheckIntervalMs: read("min_check_interval_ms", NonNegIntFromString, 1000),
    maxCheckIntervalSecs: read("max_check_interval_secs", PosIntFromString, 300),
    ignoredDbs: decodeIgnored(ini, errors),
    jobLookIntervalMs: 0,
    dbsPerInfoRequest: DEFAULT_DBS_PER_INFO_REQUEST,
  };
  return orErrors(errors, config);
};

const decodedDefaults = decodeSmooshConfig({});
if (decodedDefaults._tag === "Left") throw new Error("smoosh defaults do not decode");

/** CouchDB 3.4's defaults (plus upholster's for its own keys). */
export const defaultSmooshConfig: SmooshConfig = decodedDefaults.right;

/** Every configured channel with its kind, in the order channels are tried. */
export const configuredChannels = (config: SmooshConfig): ChannelConfig[] =>
  [...config.dbChannels, ...config.viewChannels, ...config.cleanupChannels].flatMap((name) => {
    const channel = config.channels[name];
    return channel === undefined ? [] : [channel];
  });

/** The channel names of one kind, in configured order (an object's kind: `channelKindOf`). */
export const channelsFor = (config: SmooshConfig, kind: ChannelKind): readonly string[] =>
  kind === "db" ? config.dbChannels : kind === "view" ? config.viewChannels : config.cleanupChannels;
