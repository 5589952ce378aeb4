/**
 * The `couchdb` entry of `/_upholster/status` (couchStatusSubsystem): which
 * server it is comes from `GET /`, asked at start and, while the server has
 * not answered it, again when the status is read. Over a loopback replay of
 * CouchDB 3.4.3's welcome (fixture 01).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createCouchStore } from "../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../src/adapters/state/index.js";
import { couchStatusSubsystem } from "../../src/cli/choose-store.js";
import { exchange } from "../support/fixtures.js";
import { ReplayServer } from "../support/replay-server.js";
import { waitFor } from "../support/wait-for.js";

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const statusOf = (subsystem: ReturnType<typeof couchStatusSubsystem>) =>
  subsystem.status() as { vendor: string; version?: string; serverDaemons: { state: string; smoosh?: string; ken?: string; reason?: string } };

describe("the CouchDB status entry", () => {
  it("says which server it is (vendor and version from GET /) once started", async () => {
    server = new ReplayServer().use(exchange("01"));
    const handle = createCouchStore({ url: await server.start(), logger: createRecordingLogger(), state: createMemoryStatePort(), retry: { retries: 0 } });
    const subsystem = couchStatusSubsystem(handle);
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
    const subsystem = couchStatusSubsystem(handle);
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
    const subsystem = couchStatusSubsystem(handle);
    expect(statusOf(subsystem).serverDaemons).toEqual({ state: "pending" });
    await subsystem.start();
    await waitFor(() => statusOf(subsystem).serverDaemons.state === "known", "the server's daemons read");
    expect(statusOf(subsystem).serverDaemons).toMatchObject({ smoosh: "on", ken: "on" });
    expect(logger.lines.filter((l) => l.level === "warn").map((l) => l.msg.slice(0, 30))).toEqual(["CouchDB's own smoosh runs on c", "CouchDB's own ken runs on couc"]);
    await handle.close();
  });

  it("PouchDB Server has neither: nothing asked of its config", async () => {
    server = new ReplayServer().route("GET", "/", { status: 200, body: { "express-pouchdb": "Welcome!", version: "4.2.0" } });
    const handle = createCouchStore({ url: await server.start(), logger: createRecordingLogger(), state: createMemoryStatePort(), retry: { retries: 0 } });
    const subsystem = couchStatusSubsystem(handle);
    await subsystem.start();
    await waitFor(() => statusOf(subsystem).serverDaemons.state === "not-couchdb", "PouchDB Server seen");
    expect(server.requests.map((r) => r.path)).toEqual(["/"]);
    await handle.close();
  });
});
