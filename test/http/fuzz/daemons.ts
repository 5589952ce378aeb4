/**
 * The daemons under fuzz, started as the CLI starts them (`createUpholster`
 * with the db updates subsystem, `[admins]` configured, `http: { port: 0 }`):
 * once over the in-memory store, once over the CouchDB adapter in front of a
 * replayed CouchDB 3.4.3 (replayed-couchdb.ts).
 */
import type { Logger } from "../../../src/ports/shell.js";
import { createMemoryStore } from "../../../src/adapters/memory/index.js";
import { createCouchStore } from "../../../src/adapters/couchdb-http/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import { createCouchDbAuthenticator, createLocalAuthenticator, type Authenticator } from "../../../src/http/auth/index.js";
import type { IniSections } from "../../../src/core/shared/ini.js";
import { realScheduler } from "../../../src/runtime/scheduler.js";
import { createUpholster, type Upholster, type UpholsterOptions } from "../../../src/runtime/upholster.js";
import { dbUpdatesSubsystem } from "../../../src/runtime/db-updates/subsystem.js";
import type { Credentials } from "./client-requests.js";
import { COUCH_ADMIN, startReplayedCouchDb } from "./replayed-couchdb.js";
import { NODE_NAME } from "./routes.js";

export interface FuzzDaemon {
  readonly label: string;
  readonly url: string;
  readonly port: number;
  readonly admin: Credentials;
  /** Lines the daemon logged at `error` level (a handler that threw is logged so, whether or not its 500 was seen). */
  readonly errorsLogged: readonly string[];
  /** Drops what the test's own helpers accumulate (the replay server's request log), so the heap measures the daemon. */
  forgetHistory(): void;
  stop(): Promise<void>;
}

/** A logger that keeps only error lines (bounded): the daemon logs a line per decision, thousands here. */
function errorKeepingLogger(kept: string[]): Logger {
  const ignore = (): void => undefined;
  const logger: Logger = {
    debug: ignore,
    info: ignore,
    warn: ignore,
    error: (fields, msg) => {
      if (kept.length < 100) kept.push(`${msg} ${JSON.stringify(fields)}`);
    },
    child: () => logger,
  };
  return logger;
}

const BOSS = { name: "boss", password: "s3cret" };
/** Few PBKDF2 iterations: the fuzzer sends thousands of wrong passwords, each checked in full. */
const ADMINS: IniSections = { admins: { [BOSS.name]: BOSS.password }, chttpd_auth: { iterations: "1000" }, upholster: { node_name: NODE_NAME } };

type Parts = Pick<UpholsterOptions, "store" | "events"> & { readonly documents: Parameters<typeof dbUpdatesSubsystem>[0]["store"] };

async function startUpholster(parts: Parts, authenticator: Authenticator, logger: Logger): Promise<Upholster> {
  const scheduler = realScheduler({ unref: true });
  const upholster = createUpholster({
    store: parts.store,
    events: parts.events,
    scheduler,
    logger,
    config: ADMINS,
    http: { port: 0, host: "127.0.0.1", authenticator },
    subsystems: [dbUpdatesSubsystem({ store: parts.documents, scheduler, config: ADMINS, logger, authenticator })],
  });
  await upholster.start();
  return upholster;
}

/** Logs in once, as a client would, for a real `AuthSession` cookie to fuzz with. */
async function sessionCookie(url: string): Promise<string | undefined> {
  const login = await fetch(`${url}/_session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(BOSS) });
  return login.headers.get("set-cookie")?.split(";")[0];
}

export async function startMemoryDaemon(): Promise<FuzzDaemon> {
  const errorsLogged: string[] = [];
  const logger = errorKeepingLogger(errorsLogged);
  const scheduler = realScheduler({ unref: true });
  const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
  store.createDb("grown");
  store.putDesignDoc("grown", "_design/v", { views: { v: { map: "function (doc) { emit(doc._id, 1); }" } } });
  const authenticator = await createLocalAuthenticator({ config: ADMINS, clock: scheduler });
  const upholster = await startUpholster({ store, events: store.createEventSource(), documents: store }, authenticator, logger);
  const url = upholster.httpAddress()!.url;
  return {
    label: "memory store",
    url,
    port: upholster.httpAddress()!.port,
    admin: { ...BOSS, cookie: await sessionCookie(url) },
    errorsLogged,
    forgetHistory: () => undefined,
    stop: () => upholster.stop(),
  };
}

export async function startReplayedCouchDaemon(): Promise<FuzzDaemon> {
  const errorsLogged: string[] = [];
  const logger = errorKeepingLogger(errorsLogged);
  const couch = await startReplayedCouchDb();
  const scheduler = realScheduler({ unref: true });
  const handle = createCouchStore({
    url: couch.url.replace("http://", `http://${COUCH_ADMIN.name}:${COUCH_ADMIN.password}@`),
    logger,
    scheduler,
    state: createMemoryStatePort(),
    // The recording's `_db_updates` is a finished feed; polling `_all_dbs` keeps the event source quiet and steady.
    forcePolling: true,
    pollIntervalMs: 500,
  });
  const authenticator = createCouchDbAuthenticator({ couchdbUrl: couch.url, clock: scheduler });
  const upholster = await startUpholster({ store: handle.store, events: handle.events, documents: handle.store }, authenticator, logger);
  return {
    label: "CouchDB adapter, replayed CouchDB 3.4.3",
    url: upholster.httpAddress()!.url,
    port: upholster.httpAddress()!.port,
    admin: { ...COUCH_ADMIN },
    errorsLogged,
    forgetHistory: () => couch.server.requests.splice(0),
    stop: async () => {
      await upholster.stop();
      await handle.close();
      await couch.server.stop();
    },
  };
}
