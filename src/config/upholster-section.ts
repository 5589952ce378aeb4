/**
 * The `[upholster]` section: settings of the daemon itself (not CouchDB's).
 *
 *   port         5985: next to CouchDB's 5984 so both can run on one host.
 *                (On Windows, 5985 is WinRM's port; pick another there.)
 *   bind_address 127.0.0.1: the API can suspend compaction, so loopback only
 *                unless asked (CouchDB's chttpd also defaults to 127.0.0.1).
 *   demo         true: with the in-memory store, run a small write workload so
 *                a newcomer sees compactions happen. Ignored with a real store.
 *   log_level    info (trace, debug, info, warn, error, fatal, silent).
 *   log_format   auto: human-readable lines (pino-pretty) when stdout is a
 *                terminal, JSON lines otherwise; or `pretty`, `json`.
 *   node_name    upholster@127.0.0.1: this node's name in CouchDB's
 *                `/_node/{node}/...` paths (`_local` always works too);
 *                shaped like CouchDB's own default, `couchdb@127.0.0.1`.
 *   public_status false: read-only status (`/_smoosh/status`,
 *                `/_upholster/status`, `/_upholster/metrics`) asks for a
 *                server admin like everything else; true opens it to anyone.
 *   state_dir    where upholster keeps what must survive a restart (the
 *                CouchDB feed seq, compacted seqs, smoosh queues with
 *                `[smoosh] persist = true`). Default: `[smoosh] state_dir`,
 *                else `.upholster-state` in the working directory.
 *
 * Unlike CouchDB's sections, unknown keys here are errors: this section is
 * ours, and a silently ignored typo (`prot = 80`) is worse than a refusal.
 * The error names the nearest known key (`did you mean port?`).
 */
import * as t from "io-ts";
import type { Either } from "fp-ts/lib/Either.js";
import { BooleanFromString, orErrors, readValue, type ConfigError, type IniSections } from "../core/shared/ini.js";
import { LOG_LEVELS, type LogLevelName } from "../ports/shell.js";
import { nearestKey } from "./nearest-key.js";

export const UPHOLSTER_SECTION = "upholster";
export const DEFAULT_PORT = 5985;
export const DEFAULT_BIND_ADDRESS = "127.0.0.1";
export const DEFAULT_NODE_NAME = "upholster@127.0.0.1";

export const LOG_FORMATS = ["auto", "pretty", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface UpholsterSettings {
  readonly port: number;
  readonly bindAddress: string;
  readonly demo: boolean;
  readonly logLevel: LogLevelName;
  readonly logFormat: LogFormat;
  readonly stateDir: string | undefined;
  readonly nodeName: string;
  readonly publicStatus: boolean;
}

export const defaultUpholsterSettings: UpholsterSettings = {
  port: DEFAULT_PORT,
  bindAddress: DEFAULT_BIND_ADDRESS,
  demo: true,
  logLevel: "info",
  logFormat: "auto",
  stateDir: undefined,
  nodeName: DEFAULT_NODE_NAME,
  publicStatus: false,
};

const PortFromString = new t.Type<number, string, unknown>(
  "a TCP port (0-65535; 0 picks a free one)",
  (u): u is number => typeof u === "number" && Number.isInteger(u) && u >= 0 && u <= 65535,
  (u, c) => (typeof u === "string" && /^\d{1,5}$/.test(u) && Number(u) <= 65535 ? t.success(Number(u)) : t.failure(u, c)),
  String,
);

const HostFromString = new t.Type<string, string, unknown>(
  "a host name or IP address",
  (u): u is string => typeof u === "string",
  (u, c) => (typeof u === "string" && /^[A-Za-z0-9.:[\]%_-]+$/.test(u) ? t.success(u.replace(/^\[(.*)\]$/, "$1")) : t.failure(u, c)),
  String,
);

const LogLevelFromString = new t.Type<LogLevelName, string, unknown>(
  `one of ${LOG_LEVELS.join(", ")}`,
  (u): u is LogLevelName => typeof u === "string" && (LOG_LEVELS as readonly string[]).includes(u),
  (u, c) => (typeof u === "string" && (LOG_LEVELS as readonly string[]).includes(u) ? t.success(u as LogLevelName) : t.failure(u, c)),
  String,
);

const LogFormatFromString = t.keyof({ auto: null, pretty: null, json: null }, "auto, pretty or json");

/** Erlang-style `name@host`, or any name without a slash (it is one segment of `/_node/{node}/...`). */
const NodeNameFromString = new t.Type<string, string, unknown>(
  "a node name (letters, digits and . _ @ -, e.g. upholster@127.0.0.1)",
  (u): u is string => typeof u === "string",
  (u, c) => (typeof u === "string" && /^[A-Za-z0-9._@-]+$/.test(u) && u !== "_local" ? t.success(u) : t.failure(u, c)),
  String,
);

const DirFromString = new t.Type<string, string, unknown>(
  "a directory path",
  (u): u is string => typeof u === "string",
  (u, c) => (typeof u === "string" && u.trim() !== "" ? t.success(u.trim()) : t.failure(u, c)),
  String,
);

const KNOWN_KEYS = new Set(["port", "bind_address", "demo", "log_level", "log_format", "state_dir", "node_name", "public_status"]);

export function decodeUpholsterSettings(ini: IniSections): Either<ConfigError[], UpholsterSettings> {
  const errors: ConfigError[] = [];
  const d = defaultUpholsterSettings;
  const s = UPHOLSTER_SECTION;
  const settings: UpholsterSettings = {
    port: readValue(ini, s, "port", PortFromString, d.port, errors),
    bindAddress: readValue(ini, s, "bind_address", HostFromString, d.bindAddress, errors),
    demo: readValue(ini, s, "demo", BooleanFromString, d.demo, errors),
    logLevel: readValue(ini, s, "log_level", LogLevelFromString, d.logLevel, errors),
    logFormat: readValue(ini, s, "log_format", LogFormatFromString, d.logFormat, errors),
    stateDir: readValue<string | undefined>(ini, s, "state_dir", DirFromString, d.stateDir, errors),
    nodeName: readValue(ini, s, "node_name", NodeNameFromString, d.nodeName, errors),
    publicStatus: readValue(ini, s, "public_status", BooleanFromString, d.publicStatus, errors),
  };
  for (const [key, value] of Object.entries(ini[s] ?? {})) {
    if (!KNOWN_KEYS.has(key)) errors.push({ section: s, key, value, message: unknownKeyMessage(key) });
  }
  return orErrors(errors, settings);
}

const unknownKeyMessage = (key: string): string => {
  const nearest = nearestKey(key, KNOWN_KEYS);
  const hint = nearest === undefined ? "" : `did you mean ${nearest}? `;
  return `unknown key (${hint}known: ${[...KNOWN_KEYS].join(", ")})`;
};
