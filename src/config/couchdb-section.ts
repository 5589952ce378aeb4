/**
 * The `[couchdb]` section: which CouchDB server upholster maintains, and how
 * the HTTP adapter talks to it. All keys are upholster's own; the section
 * shares its name with CouchDB's `[couchdb]` (database_dir, max_dbs_open, ...),
 * so, as CouchDB does, keys upholster does not know are ignored: a CouchDB
 * local.ini can be given as is.
 *
 *   url                  the server, `http://user:pass@host:5984[/prefix]`.
 *                        Absent: the in-memory store. `--couch` and
 *                        `COUCHDB_URL` win over it (flag > env > file).
 *   granularity          database (default) or shard (per shard file on
 *                        every node, as CouchDB's own smoosh).
 *   poll_interval_ms     10000: the polling fallback (no `_db_updates`).
 *   job_poll_interval_ms 1000: how often the daemon reads a running db
 *     compaction's info while it is young, with its channel's next db
 *     (core/compaction/job-looks.ts; the wait grows as it runs on,
 *     look-delay.ts); the watcher asks by itself after one and a half waits
 *     (see jobs.ts).
 *   heartbeat_ms         10000: `_db_updates` heartbeat.
 *   request_timeout_ms   30000: per request.
 *   retries              4: retries of a failed request (connection errors,
 *                        timeouts, 5xx, 429), capped exponential back-off.
 *   force_polling        false: skip `_db_updates` even where it exists.
 *   ddoc_check_interval_ms      2000: a written db's design docs are listed
 *                        again at most this often...
 *   ddoc_check_max_interval_ms 60000: ...doubling while nothing changes, up to
 *                        this; dbs without design docs only when docs were added.
 *   session_auth         false: log in with `POST /_session` (cookie) instead
 *                        of sending basic auth with every request.
 *   ca_file              PEM file of a private CA (https).
 *   file_compression     snappy (CouchDB's key and default; none, snappy or
 *                        deflate_1..9): how the in-memory store's files
 *                        compress bodies. A CouchDB server uses its own.
 *
 * And one key of CouchDB's `[chttpd]`, read with its name and default, so a
 * CouchDB local.ini that changes it tells upholster too:
 *
 *   max_db_number_for_dbs_info_req  100: dbs per `POST /_dbs_info`; the
 *                        daemon packs its checks to it. A server whose
 *                        limit is lower answers too_many_keys: upholster
 *                        then warns and finds the server's limit.
 *
 * The url may carry a password: a rejected url is reported without it.
 */
import * as t from "io-ts";
import type { Either } from "fp-ts/lib/Either.js";
import { BooleanFromString, orErrors, readValue, type ConfigError, type IniSections } from "../core/shared/ini.js";
import { redactUrl } from "../adapters/couchdb-http/redact.js";
import { FileCompressionCodec, type FileCompression } from "../adapters/memory/compression.js";
import { DEFAULT_DBS_PER_INFO_REQUEST } from "../core/shared/dbs-info.js";

export const COUCHDB_SECTION = "couchdb";
export const CHTTPD_SECTION = "chttpd";

export type CouchGranularity = "database" | "shard";

export interface CouchSettings {
  /** Undefined: no CouchDB; the in-memory store runs. */
  readonly url: string | undefined;
  readonly granularity: CouchGranularity;
  readonly pollIntervalMs: number;
  readonly jobPollIntervalMs: number;
  readonly heartbeatMs: number;
  readonly requestTimeoutMs: number;
  readonly retries: number;
  readonly forcePolling: boolean;
  readonly ddocCheckIntervalMs: number;
  readonly ddocCheckMaxIntervalMs: number;
  readonly sessionAuth: boolean;
  readonly caFile: string | undefined;
  /** The memory store's body compression (CouchDB's `file_compression`). */
  readonly fileCompression: FileCompression;
  /** `[chttpd] max_db_number_for_dbs_info_req`: keys per `POST /_dbs_info`. */
  readonly dbsInfoMaxKeys: number;
}

export const defaultCouchSettings: CouchSettings = {
  url: undefined,
  granularity: "database",
  pollIntervalMs: 10_000,
  jobPollIntervalMs: 1_000,
  heartbeatMs: 10_000,
  requestTimeoutMs: 30_000,
  retries: 4,
  forcePolling: false,
  ddocCheckIntervalMs: 2_000,
  ddocCheckMaxIntervalMs: 60_000,
  sessionAuth: false,
  caFile: undefined,
  fileCompression: "snappy",
  dbsInfoMaxKeys: DEFAULT_DBS_PER_INFO_REQUEST,
};

const CouchUrlFromString = new t.Type<string, string, unknown>(
  "an http: or https: URL (http://user:pass@host:5984)",
  (u): u is string => typeof u === "string",
  (u, c) => {
    if (typeof u !== "string") return t.failure(u, c);
    try {
      const parsed = new URL(u);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? t.success(u) : t.failure(u, c);
    } catch {
      return t.failure(u, c);
    }
  },
  String,
);

const GranularityFromString = t.keyof({ database: null, shard: null }, "database or shard");

/** Milliseconds within [min, max]: a 0 ms poll would hammer the server. */
const MsFromString = (min: number, max: number) =>
  new t.Type<number, string, unknown>(
    `an integer number of milliseconds from ${min} to ${max}`,
    (u): u is number => typeof u === "number",
    (u, c) => (typeof u === "string" && /^\d+$/.test(u) && Number(u) >= min && Number(u) <= max ? t.success(Number(u)) : t.failure(u, c)),
    String,
  );

const RetriesFromString = new t.Type<number, string, unknown>(
  "an integer from 0 to 20",
  (u): u is number => typeof u === "number",
  (u, c) => (typeof u === "string" && /^\d{1,2}$/.test(u) && Number(u) <= 20 ? t.success(Number(u)) : t.failure(u, c)),
  String,
);

const NonEmptyPath = new t.Type<string, string, unknown>(
  "a file path",
  (u): u is string => typeof u === "string",
  (u, c) => (typeof u === "string" && u.trim() !== "" ? t.success(u.trim()) : t.failure(u, c)),
  String,
);

const DAY_MS = 86_400_000;

/** CouchDB takes any integer; 0 would refuse every request, and a request body of more than 10,000 names helps no one. */
const DbsInfoKeysFromString = new t.Type<number, string, unknown>(
  "an integer from 1 to 10000",
  (u): u is number => typeof u === "number",
  (u, c) => (typeof u === "string" && /^\d{1,5}$/.test(u.trim()) && Number(u) >= 1 && Number(u) <= 10_000 ? t.success(Number(u)) : t.failure(u, c)),
  String,
);

export function decodeCouchSettings(ini: IniSections): Either<ConfigError[], CouchSettings> {
  const errors: ConfigError[] = [];
  const d = defaultCouchSettings;
  const s = COUCHDB_SECTION;
  const rawUrl = ini[s]?.["url"];
  const settings: CouchSettings = {
    // An empty url (e.g. `COUCHDB_URL=`) means "no CouchDB", not an error.
    url: rawUrl === undefined || rawUrl.trim() === "" ? undefined : readValue<string | undefined>(ini, s, "url", CouchUrlFromString, undefined, errors),
    granularity: readValue(ini, s, "granularity", GranularityFromString, d.granularity, errors),
    pollIntervalMs: readValue(ini, s, "poll_interval_ms", MsFromString(10, DAY_MS), d.pollIntervalMs, errors),
    jobPollIntervalMs: readValue(ini, s, "job_poll_interval_ms", MsFromString(10, DAY_MS), d.jobPollIntervalMs, errors),
    heartbeatMs: readValue(ini, s, "heartbeat_ms", MsFromString(100, DAY_MS), d.heartbeatMs, errors),
    requestTimeoutMs: readValue(ini, s, "request_timeout_ms", MsFromString(100, DAY_MS), d.requestTimeoutMs, errors),
    retries: readValue(ini, s, "retries", RetriesFromString, d.retries, errors),
    forcePolling: readValue(ini, s, "force_polling", BooleanFromString, d.forcePolling, errors),
    ddocCheckIntervalMs: readValue(ini, s, "ddoc_check_interval_ms", MsFromString(0, DAY_MS), d.ddocCheckIntervalMs, errors),
    ddocCheckMaxIntervalMs: readValue(ini, s, "ddoc_check_max_interval_ms", MsFromString(0, DAY_MS), d.ddocCheckMaxIntervalMs, errors),
    sessionAuth: readValue(ini, s, "session_auth", BooleanFromString, d.sessionAuth, errors),
    caFile: readValue<string | undefined>(ini, s, "ca_file", NonEmptyPath, d.caFile, errors),
    fileCompression: readValue(ini, s, "file_compression", FileCompressionCodec, d.fileCompression, errors),
    dbsInfoMaxKeys: readValue(ini, CHTTPD_SECTION, "max_db_number_for_dbs_info_req", DbsInfoKeysFromString, d.dbsInfoMaxKeys, errors),
  };
  // The rejected value is echoed in the message: never with a password in it.
  const safe = errors.map((e) => (e.key === "url" ? { ...e, value: redactConfigUrl(e.value) } : e));
  return orErrors(safe, settings);
}

/** redactUrl, plus anything before an `@` when the value is not even a URL (`user:pass@host`). */
export const redactConfigUrl = (value: string): string => {
  const redacted = redactUrl(value);
  const at = redacted.lastIndexOf("@");
  return at < 0 ? redacted : `<redacted>@${redacted.slice(at + 1)}`;
};
