/**
 * The `couchdb` entry of `/_upholster/status` (couchStatusSubsystem): which
 * server it is comes from `GET /`, asked at start and, while the server has
 * not answered it, again when the status is read; whether CouchDB's own
 * smoosh and ken run, from its config, read at start and every ten minutes.
 * Over a loopback replay of CouchDB 3.4.3's answers (fixtures 01, 04, 07, 08).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createCouchStore } from "../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../src/adapters/state/index.js";
import { realScheduler } from "../../src/adapters/couchdb-http/timers.js";
import { SERVER_DAEMONS_REREAD_MS } from "../../src/adapters/couchdb-http/server-daemons-watch.js";
import { couchStatusSubsystem } from "../../src/cli/choose-store.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";
import { exchange } from "../support/fixtures.js";
import { ReplayServer } from "../support/replay-server.js";
import { waitFor } from "../support/wait-for.js";

let server: ReplayServer | undefined;
/** Subsystems started by a test: stopped after it (their re-read timer is a real one in most). */
const started: ReturnType<typeof couchStatusSubsystem>[] = [];
afterEach(async () => {
  for (const subsystem of started.splice(0)) await subsystem.stop();
  await server?.stop();
  server = undefined;
});

const statusOf = (subsystem: ReturnType<typeof couchStatusSubsystem>) =>
  subsystem.status() as { vendor: string; version?: string; serverDaemons: { state: string; smoosh?: string; ken?: string; reason?: string } };

describe("the CouchDB status entry", () => {
  it("says which server it is (vendor and version from GET /) once started", async () => {
    server = new ReplayServer().use(exchange("01"));
    const handle = createCouchStore({ url: await server.start(), logger: createRecordingLogger(), state: createMemoryStatePort(), retry: { retries: 0 } });
    const subsystem = couchStatusSubsystem(handle, realScheduler);
    started.push(subsystem);
    expect(statusOf(subsystem).vendor).toBe("unknown");
    await subsystem.start();
    await waitFor(() => statusOf(subsystem).vendor === "couchdb", "the vendor from GET /");
    expect(statusOf(subsystem)).toMatchObject({ vendor: "couchdb", version: "3.4.3" });
    expect(server.count("GET", "/")).toBe(1);
    statusOf(subsystem);
    expect(server.count("GET", "/")).toBe(1);
    await handle.close();
  });

  it("a server that failed the first GET / is asked again when the status is read", async () => {
    server = new ReplayServer();
    let up = false;
    const root = exchange("01");
    server.route("GET", "/", () => (up ? { status: 200, body: root.response.body } : { status: 500, body: { error: "unknown_error", reason: "down" } }));
    const handle = createCouchStore({ url: await server.start(), logger: createRecordingLogger(), state: createMemoryStatePort(), retry: { retries: 0 } });
    const subsystem = couchStatusSubsystem(handle, realScheduler);
    started.push(subsystem);
    await subsystem.start();
    await waitFor(() => server!.count("GET", "/") === 1, "the first GET /");
    expect(statusOf(subsystem).vendor).toBe("unknown");
    up = true;
    statusOf(subsystem);
    await waitFor(() => statusOf(subsystem).vendor === "couchdb", "the vendor from GET /");
    await handle.close();
  });

  it("says whether CouchDB's own smoosh and ken run (read from its config after GET /), and warns: a stock 3.4.3 runs both", async () => {
    const NODE_CONFIG = "/_node/couchdb%40127.0.0.1/_config/";
    const sections: Record<string, unknown> = { smoosh: exchange("07").response.body, ken: exchange("08").response.body };
    server = new ReplayServer().use(exchange("01")).use(exchange("04"));
    server.route("GET", (p) => p.startsWith(NODE_CONFIG), (req) => ({ status: 200, body: sections[decodeURIComponent(req.path.slice(NODE_CONFIG.length))] ?? {} }));
    const logger = createRecordingLogger();
    const handle = createCouchStore({ url: await server.start(), logger, state: createMemoryStatePort(), retry: { retries: 0 } });
    const subsystem = couchStatusSubsystem(handle, realScheduler);
    started.push(subsystem);
    expect(statusOf(subsystem).serverDaemons).toEqual({ state: "pending" });
    await subsystem.start();
    await waitFor(() => statusOf(subsystem).serverDaemons.state === "known", "the server's daemons read");
    expect(statusOf(subsystem).serverDaemons).toMatchObject({ smoosh: "on", ken: "on" });
    expect(logger.lines.filter((l) => l.level === "warn").map((l) => l.msg.slice(0, 30))).toEqual(["CouchDB's own smoosh runs on c", "CouchDB's own ken runs on couc"]);
    await handle.close();
  });

  it("reads CouchDB's config again every ten minutes while it runs: smoosh switched on later is warned with no status read; stopped, it asks no more", async () => {
    const NODE_CONFIG = "/_node/couchdb%40127.0.0.1/_config/";
    const CHANNELS = ["index_cleanup", "ratio_dbs", "ratio_views", "slack_dbs", "slack_views", "upgrade_dbs", "upgrade_views"];
    // Switched off as docs/couchdb.md shows: every channel at concurrency 0, ken's channels at 0.
    const sections = new Map<string, unknown>([["ken", { batch_channels: "0", incremental_channels: "0" }], ...CHANNELS.map((c): [string, unknown] => [`smoosh.${c}`, { concurrency: "0" }])]);
    server = new ReplayServer().use(exchange("01")).use(exchange("04"));
    server.route("GET", (p) => p.startsWith(NODE_CONFIG), (req) => ({ status: 200, body: sections.get(decodeURIComponent(req.path.slice(NODE_CONFIG.length))) ?? {} }));
    const configReads = () => server!.requests.filter((r) => r.path === `${NODE_CONFIG}smoosh`).length;
    const logger = createRecordingLogger();
    const scheduler = new VirtualScheduler({ startMs: Date.UTC(2026, 10, 29) });
    const handle = createCouchStore({ url: await server.start(), logger, state: createMemoryStatePort(), scheduler, retry: { retries: 0 } });
    const subsystem = couchStatusSubsystem(handle, scheduler);
    await subsystem.start();
    await waitFor(() => statusOf(subsystem).serverDaemons.state === "known", "the server's daemons read");
    expect(statusOf(subsystem).serverDaemons).toMatchObject({ smoosh: "off", ken: "off" });
    expect(configReads()).toBe(1);
    // The operator switches smoosh on again (its channels' concurrency unset: CouchDB's default 1).
    for (const c of CHANNELS) sections.delete(`smoosh.${c}`);
    await scheduler.advanceByAsync(SERVER_DAEMONS_REREAD_MS - 1);
    expect(configReads()).toBe(1);
    await scheduler.advanceByAsync(1);
    await waitFor(() => logger.lines.some((l) => l.level === "warn"), "the warning, with no status read");
    expect(logger.lines.filter((l) => l.level === "warn").map((l) => l.msg.slice(0, 30))).toEqual(["CouchDB's own smoosh runs on c"]);
    expect(configReads()).toBe(2);
    await scheduler.advanceByAsync(SERVER_DAEMONS_REREAD_MS);
    await waitFor(() => configReads() === 3, "the third read");
    await subsystem.stop();
    await scheduler.advanceByAsync(3 * SERVER_DAEMONS_REREAD_MS);
    expect(configReads()).toBe(3);
    expect(scheduler.pendingTimers()).toBe(0);
    await handle.close();
  });

  it("PouchDB Server has neither: nothing asked of its config", async () => {
    server = new ReplayServer().route("GET", "/", { status: 200, body: { "express-pouchdb": "Welcome!", version: "4.2.0" } });
    const handle = createCouchStore({ url: await server.start(), logger: createRecordingLogger(), state: createMemoryStatePort(), retry: { retries: 0 } });
    const subsystem = couchStatusSubsystem(handle, realScheduler);
    started.push(subsystem);
    await subsystem.start();
    await waitFor(() => statusOf(subsystem).serverDaemons.state === "not-couchdb", "PouchDB Server seen");
    expect(server.requests.map((r) => r.path)).toEqual(["/"]);
    await handle.close();
  });
});
