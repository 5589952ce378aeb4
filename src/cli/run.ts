/**
 * `upholster run`: load the configuration (file, then `COUCHDB_URL`, then
 * flags), choose the store, start everything, print where the API listens,
 * and stop cleanly on SIGINT/SIGTERM. Exit codes: 0 stopped by a signal,
 * 1 could not start, 2 invalid configuration.
 */
import { isLeft } from "fp-ts/lib/Either.js";
import type { IniSections } from "../core/shared/ini.js";
import { formatConfigProblem, loadConfig, type UpholsterConfig } from "../config/load.js";
import { mergeIni } from "../config/ini-file.js";
import { createFileStatePort } from "../adapters/state/index.js";
import { createPinoLogger } from "../adapters/logging/index.js";
import { realScheduler } from "../runtime/scheduler.js";
import { createUpholster } from "../runtime/upholster.js";
import { dbUpdatesSubsystem } from "../runtime/db-updates/subsystem.js";
import { chooseStore } from "./choose-store.js";

export interface RunFlags {
  readonly config?: string | undefined;
  readonly port?: string | undefined;
  readonly host?: string | undefined;
  /** Only set when given on the command line (`--no-demo`), so the file's `demo` stays in force otherwise. */
  readonly demo?: boolean | undefined;
  readonly logLevel?: string | undefined;
  /** `--couch URL`: maintain this CouchDB server (`[couchdb] url`). */
  readonly couch?: string | undefined;
}

/** The environment variables `run` reads (injected, so tests need not touch process.env). */
export type RunEnv = Readonly<Record<string, string | undefined>>;

export interface Terminal {
  out(line: string): void;
  err(line: string): void;
}

/** Flags become INI values of `[upholster]`, so they are validated (and reported) exactly like the file. */
export const flagsToIni = (flags: RunFlags): IniSections => {
  const upholster: Record<string, string> = {};
  if (flags.port !== undefined) upholster.port = flags.port;
  if (flags.host !== undefined) upholster.bind_address = flags.host;
  if (flags.demo !== undefined) upholster.demo = String(flags.demo);
  if (flags.logLevel !== undefined) upholster.log_level = flags.logLevel;
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
  const logger = createPinoLogger({ level: config.upholster.logLevel });
  // The file state port creates its directory on the first save only: with the
  // in-memory store and `persist = false` nothing is ever written there.
  const state = createFileStatePort(stateDirOf(config), {
    onCorrupt: (key, path) => logger.warn({ key, path }, "a saved state file did not parse; set aside, starting afresh"),
  });
  let choice;
  try {
    choice = await chooseStore({ config, scheduler, logger, state });
  } catch (error) {
    terminal.err(`upholster: cannot start: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const authenticator = await choice.authenticator();
  const upholster = createUpholster({
    store: choice.store,
    events: choice.events,
    config,
    scheduler,
    logger,
    state,
    http: { port: config.upholster.port, host: config.upholster.bindAddress },
    subsystems: [dbUpdatesSubsystem({ store: choice.store, scheduler, config: config.ini, logger, authenticator }), ...choice.subsystems],
  });
  const demo = config.upholster.demo ? choice.prepareDemo?.() : undefined;
  demo?.prefill();
  try {
    await upholster.start();
  } catch (error) {
    terminal.err(`upholster: cannot start: ${error instanceof Error ? error.message : String(error)}`);
    await choice.close();
    return 1;
  }
  demo?.start();
  terminal.out(`upholster listening on ${upholster.httpAddress()?.url ?? "(no HTTP)"}`);
  terminal.out(`store: ${choice.describe()}${demo !== undefined ? `; demo workload on ${demo.dbs.length} dbs (switch off with --no-demo)` : ""}`);

  const signal = await untilStopped();
  logger.info({ signal }, "stopping");
  demo?.stop();
  await upholster.stop();
  await choice.close();
  return 0;
}
