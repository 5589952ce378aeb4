/**
 * Who may call what, over loopback with fetch: every operator endpoint
 * (`/_smoosh/*`, `/_node/{node}/...`, `/_upholster/*`, `/_db_updates`) with no
 * credentials, a wrong password, a non-admin user and an admin, answered
 * with CouchDB 3.4's bodies (fixtures 15-17, 86). Non-admin users come from
 * PouchDB Server's `_users`, asked through its `_session` as upholster asks
 * CouchDB's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/adapters/memory/index.js";
import { createRecordingLogger, type RecordingLogger } from "../../src/adapters/logging/index.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { createUpholster, type Upholster } from "../../src/runtime/upholster.js";
import { dbUpdatesSubsystem } from "../../src/runtime/db-updates/subsystem.js";
import { createCouchDbAuthenticator, createLocalAuthenticator, type Authenticator } from "../../src/http/auth/index.js";
import { UnprotectedServerError } from "../../src/http/auth/exposure.js";
import type { IniSections } from "../../src/core/shared/ini.js";
import { startPouchDbServer, type PouchDbServer } from "../support/pouchdb-server.js";

const NOT_ADMIN = { error: "unauthorized", reason: "You are not a server admin." };
const BAD_CREDENTIALS = { error: "unauthorized", reason: "Name or password is incorrect." };
const ADMINS: IniSections = { admins: { boss: "s3cret" }, chttpd_auth: { iterations: "1000" } };

const basic = (name: string, password: string): Record<string, string> => ({
  Authorization: `Basic ${Buffer.from(`${name}:${password}`).toString("base64")}`,
});

interface Endpoint {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly body?: string;
  readonly ok: number;
  /** Read-only status: opened by `public_status = true`. */
  readonly status?: true;
}

const ENDPOINTS: readonly Endpoint[] = [
  { method: "GET", path: "/_smoosh/status", ok: 200, status: true },
  { method: "GET", path: "/_node/_local/_smoosh/status", ok: 200, status: true },
  { method: "GET", path: "/_node/upholster@127.0.0.1/_smoosh/status", ok: 200, status: true },
  { method: "GET", path: "/_upholster/status", ok: 200, status: true },
  { method: "GET", path: "/_upholster/metrics", ok: 200, status: true },
  { method: "GET", path: "/_node/_local", ok: 200 },
  { method: "POST", path: "/_smoosh/suspend", ok: 200 },
  { method: "POST", path: "/_smoosh/resume", ok: 200 },
  { method: "POST", path: "/_smoosh/flush", ok: 200 },
  { method: "POST", path: "/_smoosh/enqueue", body: '{"db":"grown"}', ok: 202 },
  { method: "POST", path: "/_smoosh/enqueue_all", ok: 202 },
  { method: "POST", path: "/_node/_local/_smoosh/flush", ok: 200 },
  { method: "GET", path: "/_db_updates", ok: 200 },
];

interface Daemon {
  readonly upholster: Upholster;
  readonly url: string;
  readonly logger: RecordingLogger;
}

const running: Upholster[] = [];

async function startDaemon(ini: IniSections, authenticator?: Authenticator, host = "127.0.0.1"): Promise<Daemon> {
  const scheduler = realScheduler({ unref: true });
  const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
  store.createDb("grown");
  const logger = createRecordingLogger();
  const auth = authenticator ?? (await createLocalAuthenticator({ config: ini, clock: scheduler }));
  const upholster = createUpholster({
    store,
    events: store.createEventSource(),
    scheduler,
    logger,
    config: ini,
    http: { port: 0, host, authenticator: auth },
    subsystems: [dbUpdatesSubsystem({ store, scheduler, config: ini, logger, authenticator: auth })],
  });
  await upholster.start();
  running.push(upholster);
  return { upholster, url: upholster.httpAddress()!.url, logger };
}

afterAll(async () => {
  for (const upholster of running.splice(0)) await upholster.stop();
});

const call = async (base: string, endpoint: Endpoint, headers: Record<string, string> = {}) => {
  const response = await fetch(`${base}${endpoint.path}`, {
    method: endpoint.method,
    body: endpoint.body,
    headers: { "Content-Type": "application/json", ...headers },
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as unknown };
};

describe("with [admins] (the local store)", () => {
  let daemon: Daemon;
  beforeAll(async () => {
    daemon = await startDaemon(ADMINS);
  });

  it.each(ENDPOINTS)("$method $path: no credentials -> 401 You are not a server admin.", async (endpoint) => {
    expect(await call(daemon.url, endpoint)).toEqual({ status: 401, body: NOT_ADMIN });
  });

  it.each(ENDPOINTS)("$method $path: a wrong password -> 401 Name or password is incorrect.", async (endpoint) => {
    expect(await call(daemon.url, endpoint, basic("boss", "wrong"))).toEqual({ status: 401, body: BAD_CREDENTIALS });
    expect(await call(daemon.url, endpoint, basic("nobody", "s3cret"))).toEqual({ status: 401, body: BAD_CREDENTIALS });
  });

  it.each(ENDPOINTS)("$method $path: an admin -> $ok", async (endpoint) => {
    expect((await call(daemon.url, endpoint, basic("boss", "s3cret"))).status).toBe(endpoint.ok);
  });

  it("an admin's AuthSession cookie from POST /_session works like Basic", async () => {
    const login = await fetch(`${daemon.url}/_session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"name":"boss","password":"s3cret"}' });
    expect(login.status).toBe(200);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    expect((await call(daemon.url, ENDPOINTS[6]!, { Cookie: cookie })).status).toBe(200);
  });

  it("/, /_up and /_session stay open, as in CouchDB", async () => {
    for (const path of ["/", "/_up", "/_session"]) expect((await fetch(`${daemon.url}${path}`)).status).toBe(200);
  });

  it("a node other than _local or node_name is CouchDB's 404, after the admin check", async () => {
    const path = "/_node/couchdb@127.0.0.1/_smoosh/status";
    expect(await call(daemon.url, { method: "GET", path, ok: 404 })).toEqual({ status: 401, body: NOT_ADMIN });
    expect(await call(daemon.url, { method: "GET", path, ok: 404 }, basic("boss", "s3cret"))).toEqual({
      status: 404,
      body: { error: "not_found", reason: "no such node: couchdb@127.0.0.1" },
    });
    const named = await call(daemon.url, { method: "GET", path: "/_node/_local", ok: 200 }, basic("boss", "s3cret"));
    expect(named.body).toEqual({ name: "upholster@127.0.0.1" });
  });

  it("a wrong method on an admin path is authorized first (401), then 405 for an admin", async () => {
    const wrong: Endpoint = { method: "GET", path: "/_smoosh/flush", ok: 405 };
    expect((await call(daemon.url, wrong)).status).toBe(401);
    expect(await call(daemon.url, wrong, basic("boss", "s3cret"))).toEqual({
      status: 405,
      body: { error: "method_not_allowed", reason: "Only POST allowed" },
    });
  });
});

describe("[upholster] public_status = true", () => {
  it("opens read-only status to anyone; every action still asks for an admin", async () => {
    const daemon = await startDaemon({ ...ADMINS, upholster: { public_status: "true", node_name: "east@10.0.0.1" } });
    for (const endpoint of ENDPOINTS) {
      const answer = await call(daemon.url, { ...endpoint, path: endpoint.path.replace("upholster@127.0.0.1", "east@10.0.0.1") });
      if (endpoint.status === true) expect(answer.status, endpoint.path).toBe(endpoint.ok);
      else expect(answer, endpoint.path).toEqual({ status: 401, body: NOT_ADMIN });
    }
  });
});

describe("without any admin", () => {
  it("on loopback: everything is open, and it is said once, clearly", async () => {
    const daemon = await startDaemon({});
    for (const endpoint of ENDPOINTS) expect((await call(daemon.url, endpoint)).status, endpoint.path).toBe(endpoint.ok);
    expect(daemon.logger.find("no server admins")).toHaveLength(1);
    expect(daemon.logger.find("no server admins")[0]!.level).toBe("warn");
  });

  it("on any other address: start() refuses, as CouchDB 3 refuses to start without an admin", async () => {
    const scheduler = realScheduler({ unref: true });
    const store = createMemoryStore({ scheduler });
    const upholster = createUpholster({ store, events: store.createEventSource(), scheduler, logger: createRecordingLogger(), http: { port: 0, host: "0.0.0.0" } });
    await expect(upholster.start()).rejects.toThrow(UnprotectedServerError);
    await expect(upholster.start()).rejects.toThrow(/refusing to listen on 0\.0\.0\.0 without a server admin.*\[admins\]/);
    expect(upholster.httpAddress()).toBeUndefined();
  });
});

describe("against PouchDB Server's users (CouchDB's _session)", () => {
  let pouch: PouchDbServer;
  let daemon: Daemon;
  beforeAll(async () => {
    pouch = await startPouchDbServer();
    expect((await fetch(`${pouch.url}/_config/admins/admin`, { method: "PUT", body: JSON.stringify("pw") })).ok).toBe(true);
    const user = await fetch(`${pouch.url}/_users/org.couchdb.user:reader`, {
      method: "PUT",
      headers: { "Content-Type": "application/json", ...basic("admin", "pw") },
      body: JSON.stringify({ _id: "org.couchdb.user:reader", name: "reader", password: "pw2", roles: [], type: "user" }),
    });
    expect(user.status).toBeLessThan(300);
    daemon = await startDaemon({}, createCouchDbAuthenticator({ couchdbUrl: pouch.url, clock: realScheduler({ unref: true }), cacheMs: 0 }));
  }, 90_000);
  afterAll(async () => {
    await pouch?.stop();
  });

  it.each(ENDPOINTS)("$method $path: a non-admin user -> 401, its admin -> $ok, anonymous -> 401", async (endpoint) => {
    expect(await call(daemon.url, endpoint, basic("reader", "pw2"))).toEqual({ status: 401, body: NOT_ADMIN });
    expect((await call(daemon.url, endpoint, basic("admin", "pw"))).status).toBe(endpoint.ok);
    expect(await call(daemon.url, endpoint)).toEqual({ status: 401, body: NOT_ADMIN });
    expect(await call(daemon.url, endpoint, basic("reader", "nope"))).toEqual({ status: 401, body: BAD_CREDENTIALS });
  });
});
