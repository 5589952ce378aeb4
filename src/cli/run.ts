/**
 * `upholster run`: load the configuration (file, then `COUCHDB_URL`, then
 * flags), choose the store, start everything, print where the API listens
 * and how to get in, and stop cleanly on SIGINT/SIGTERM. Exit codes: 0
 * stopped by a signal, 1 could not start, 2 invalid configuration (bad
 * flags too, and a non-loopback bind without any admin).
 */
import { isLeft } from "fp-ts/lib/Either.js";
import type { IniSections } from "../core/shared/ini.js";
import { formatConfigProblem, loadConfig, type UpholsterConfig } from "../config/load.js";
import { mergeIni } from "../config/ini-file.js";
import { join } from "node:path";
import { createFileStatePort } from "../adapters/state/index.js";
import type { Logger } from "../ports/shell.js";
import type { Authenticator } from "../http/auth/types.js";
import { isLocalAuthenticator } from "../http/auth/local-authenticator.js";
import { UnprotectedServerError } from "../http/auth/exposure.js";
import { realScheduler } from "../runtime/scheduler.js";
import { createUpholster, type Upholster } from "../runtime/upholster.js";
import { dbUpdatesSubsystem } from "../runtime/db-updates/subsystem.js";
import { chooseStore, type StoreChoice } from "./choose-store.js";
import { firstRunLines, makeFirstRunAdmin, needsFirstRunAdmin, signInLine, type RunAdmin } from "./first-run.js";
import { createCliLogger, resolveLogFormat } from "./log-output.js";

export interface RunFlags {
  readonly config?: string | undefined;
  readonly port?: string | undefined;
  readonly host?: string | undefined;
  /** Only set when given on the command line (`--no-demo`), so the file's `demo` stays in force otherwise. */
  readonly demo?: boolean | undefined;
  readonly logLevel?: string | undefined;
  /** `--log-format pretty|json|auto` (`[upholster] log_format`). */
  readonly logFormat?: string | undefined;
  /** `--couch URL`: maintain this CouchDB server (`[couchdb] url`). */
  readonly couch?: string | undefined;
}

/** The environment variables `run` reads (injected, so tests need not touch process.env). */
export type RunEnv = Readonly<Record<string, string | undefined>>;

export interface Terminal {
  out(line: string): void;
  err(line: string): void;
  /** Whether stdout is a terminal: `log_format = auto` is then human-readable (and coloured). */
  readonly isTerminal?: boolean;
}

/** Flags become INI values of `[upholster]`, so they are validated (and reported) exactly like the file. */
export const flagsToIni = (flags: RunFlags): IniSections => {
  const upholster: Record<string, string> = {};
  if (flags.port !== undefined) upholster.port = flags.port;
  if (flags.host !== undefined) upholster.bind_address = flags.host;
  if (flags.demo !== undefined) upholster.demo = String(flags.demo);
  if (flags.logLevel !== undefined) upholster.log_level = flags.logLevel;
  if (flags.logFormat !== undefined) upholster.log_format = flags.logFormat;
  return {
    ...(Object.keys(upholster).length > 0 ? { upholster } : {}),
    ...(flags.couch !== undefined ? { couchdb: { url: flags.couch } } : {}),
  };
};

/** `COUCHDB_URL` becomes `[couchdb] url`, between the file and the flags. An empty value is as if unset. */
export const envToIni = (env: RunEnv): IniSections => {
  const url = env.COUCHDB_URL;
  return url === undefined || url.trim() === "" ? {} : { couchdb: { url } };
};

/** Default state directory (smoosh queues with `persist = true`, the CouchDB feed seq and compacted seqs). */
export const DEFAULT_STATE_DIR = ".upholster-state";

/** `[upholster] state_dir`, else `[smoosh] state_dir`, else `.upholster-state`. */
export const stateDirOf = (config: UpholsterConfig): string => config.upholster.stateDir ?? config.smoosh.stateDir ?? DEFAULT_STATE_DIR;

export async function runCommand(flags: RunFlags, terminal: Terminal, untilStopped: () => Promise<string>, env: RunEnv = {}): Promise<number> {
  const loaded = await loadConfig({ path: flags.config, overrides: mergeIni(envToIni(env), flagsToIni(flags)) });
  if (isLeft(loaded)) {
    terminal.err("upholster: invalid configuration:");
    for (const problem of loaded.left) terminal.err(`  ${formatConfigProblem(problem)}`);
    return 2;
  }
  const config = loaded.right;
  const scheduler = realScheduler();
  const isTerminal = terminal.isTerminal === true;
  const logger = createCliLogger(config.upholster.logLevel, resolveLogFormat(config.upholster.logFormat, isTerminal), isTerminal);
  // The file state port creates its directory on the first save only: with the
  // in-memory store and `persist = false` nothing is ever written there.
  const state = createFileStatePort(stateDirOf(config), {
    onCorrupt: (key, path) => logger.warn({ key, path }, "a saved state file did not parse; set aside, starting afresh"),
  });
  let choice: StoreChoice;
  try {
    choice = await chooseStore({ config, scheduler, logger, state });
  } catch (error) {
    terminal.err(`upholster: cannot start: ${errorMessage(error)}`);
    return 1;
  }
  const demo = config.upholster.demo ? choice.prepareDemo?.() : undefined;
  const runAdmin = needsFirstRunAdmin(config.ini, demo !== undefined) ? makeFirstRunAdmin() : undefined;
  const authenticator = await choice.authenticator(runAdmin);
  const upholster = createUpholster({
    store: choice.store,
    events: choice.events,
    config,
    scheduler,
    logger,
    state,
    http: { port: config.upholster.port, host: config.upholster.bindAddress, authenticator },
    // `state`: what the feed knows of each db survives restarts, so events lost while upholster was down are recovered.
    subsystems: [dbUpdatesSubsystem({ store: choice.store, scheduler, config: config.ini, logger, authenticator, state }), ...choice.subsystems],
    indexing: choice.indexing,
    geo: choice.geoIndexesOnDisk && config.geo.indexDir === undefined ? { indexDir: join(stateDirOf(config), "geo") } : {},
  });
  choice.queryTap?.connect((db, ddoc) => upholster.indexing.noteQuery(db, ddoc));
  demo?.prefill();
  const started = await start(upholster, choice, terminal);
  if (started !== 0) return started;
  demo?.start();
  // Listen for the stop signal before saying we are up: whoever waits for the lines below may signal at
  // once, and a SIGINT that comes before a listener kills the process where it stands (no clean stop).
  const stopped = untilStopped();
  const url = upholster.httpAddress()?.url ?? "(no HTTP)";
  terminal.out(`upholster listening on ${url}`);
  terminal.out(`store: ${choice.describe()}${demo !== undefined ? `; demo workload on ${demo.dbs.length} dbs (switch off with --no-demo)` : ""}`);
  for (const line of howToGetIn(url, authenticator, runAdmin)) terminal.out(line);
  return stopOnSignal(stopped, logger, async () => {
    demo?.stop();
    await upholster.stop();
    await choice.close();
  });
}

/** 0 when started; else the exit code, the reason printed. */
async function start(upholster: Upholster, choice: StoreChoice, terminal: Terminal): Promise<number> {
  try {
    await upholster.start();
    return 0;
  } catch (error) {
    await choice.close();
    if (error instanceof UnprotectedServerError) {
      terminal.err(`upholster: invalid configuration: ${error.message}`);
      return 2;
    }
    terminal.err(`upholster: cannot start: ${errorMessage(error)}`);
    return 1;
  }
}

/** The lines after `upholster listening on ...`: how to read the feed with curl, whoever the admins are. */
function howToGetIn(url: string, authenticator: Authenticator, runAdmin: RunAdmin | undefined): string[] {
  if (runAdmin !== undefined) return firstRunLines(url, runAdmin);
  if (!authenticator.hasAdmins()) return [`no server admins: anyone on this machine may use the API: curl '${url}/_db_updates'`];
  return [signInLine(url, isLocalAuthenticator(authenticator) ? "one of the [admins]" : "a CouchDB user with the _admin role (upholster asks CouchDB's /_session)")];
}

async function stopOnSignal(stopped: Promise<string>, logger: Logger, stop: () => Promise<void>): Promise<number> {
  const signal = await stopped;
  logger.info({ signal }, "stopping");
  await stop();
  return 0;
}

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));
