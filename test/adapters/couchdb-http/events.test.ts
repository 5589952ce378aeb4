/**
 * The event source over a loopback replay server: the continuous `_db_updates`
 * feed (recorded body of fixture 78), saved seq and resume, and the polling
 * fallback when the feed answers 400 (PouchDB Server) or 404.
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCouchStore } from "../../../src/adapters/couchdb-http/index.js";
import { EVENTS_STATE_KEY } from "../../../src/adapters/couchdb-http/events.js";
import type { StoreEvent } from "../../../src/ports/events.js";
import { exchange } from "../../support/fixtures.js";
import { ReplayServer, replyOf } from "../../support/replay-server.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import { waitFor } from "../../support/wait-for.js";

let server: ReplayServer;
let base: string;
beforeEach(async () => {
  server = new ReplayServer();
  base = await server.start();
});
afterEach(async () => {
  await server.stop();
});

const feed78 = exchange("78").response.body as string;
const lastSeqOf78 = "379-g1AAAACbeJzLYWBgYMpgTmEQTM4vTc5ISXIwNDLXMwBCwxyQVCJDUv3___-zMpgTl-QCBdgNLZKMLS2TsWnAY0weC5BkaABS_6GmXQeblmacbJRknIZNXxYAf-sp_Q";

describe("_db_updates continuous feed", () => {
  it("delivers created/updated/deleted (not _dbs), saves the last seq and resumes from it after a restart", async () => {
    server.route("GET", (p) => p.startsWith("/_db_updates?"), { status: 200, body: feed78, raw: true, hold: true });
    server.route("GET", (p) => p.startsWith("/fx_dbu_b/_all_docs"), { status: 404, body: { error: "not_found" } });
    const state = createMemoryStatePort();
    const logger = createRecordingLogger();
    const events: StoreEvent[] = [];
    const handle = createCouchStore({ url: base, logger, state, heartbeatMs: 60_000 });
    await handle.events.start((e) => events.push(e));
    await waitFor(() => events.length >= 3, "three events");
    expect(events).toEqual([
      { type: "db-created", db: "fx_dbu_b" },
      { type: "db-updated", db: "fx_dbu_b" },
      { type: "db-deleted", db: "fx_dbu_b" },
    ]);
    expect(handle.events.status()).toMatchObject({ mode: "db_updates", connected: true });
    const q = new URL(`http://x${server.requests[0]?.path ?? ""}`).searchParams;
    expect([q.get("feed"), q.get("since"), q.get("heartbeat")]).toEqual(["continuous", "now", "60000"]);
    await waitFor(async () => ((await state.load(EVENTS_STATE_KEY)) as { dbUpdatesSeq?: string } | undefined)?.dbUpdatesSeq === lastSeqOf78, "seq saved");
    await handle.close();

    // A restart: the new source asks for what came after the saved seq.
    const again = createCouchStore({ url: base, logger, state, heartbeatMs: 60_000 });
    await again.events.start(() => undefined);
    await waitFor(() => server.requests.filter((r) => r.path.startsWith("/_db_updates?")).length >= 2, "second feed request");
    const second = server.requests.filter((r) => r.path.startsWith("/_db_updates?"))[1];
    expect(new URL(`http://x${second?.path ?? ""}`).searchParams.get("since")).toBe(lastSeqOf78);
    await again.close();
  });

  it("reconnects when the feed ends, from the last seq, without repeating the rows, and says events may have been missed", async () => {
    let n = 0;
    server.route("GET", (p) => p.startsWith("/_db_updates?"), () => {
      n += 1;
      return n === 1
        ? { status: 200, body: '{"db_name":"a","type":"updated","seq":"5-x"}\n{"last_seq":"5-x"}\n', raw: true }
        : { status: 200, body: '{"db_name":"b","type":"updated","seq":"6-y"}\n', raw: true, hold: true };
    });
    server.route("GET", (p) => /\/_all_docs/.test(p), { status: 200, body: { rows: [] } });
    const events: StoreEvent[] = [];
    const handle = createCouchStore({ url: base, logger: createRecordingLogger(), state: createMemoryStatePort(), heartbeatMs: 60_000 });
    await handle.events.start((e) => events.push(e));
    await waitFor(() => events.length >= 3, "events from two connections");
    // CouchDB's own feed loses what its global_changes buffered when it restarts: a reconnect is announced.
    expect(events).toEqual([{ type: "db-updated", db: "a" }, { type: "source-resumed", reason: "_db_updates reconnected (since 5)" }, { type: "db-updated", db: "b" }]);
    const feeds = server.requests.filter((r) => r.path.startsWith("/_db_updates?"));
    expect(new URL(`http://x${feeds[1]?.path ?? ""}`).searchParams.get("since")).toBe("5-x");
    await handle.close();
  });

  it("a design doc change becomes ddoc-updated; an unchanged ddoc view-updated", async () => {
    server.route("GET", (p) => p.startsWith("/_db_updates?"), { status: 200, body: '{"db_name":"fx_db","type":"updated","seq":"1-a"}\n', raw: true, hold: true });
    const rev = "1-aaa";
    server.route("GET", (p) => p.startsWith("/fx_db/_all_docs?"), () => ({
      status: 200,
      body: { total_rows: 1, offset: 0, rows: [{ id: "_design/d", key: "_design/d", value: { rev }, doc: { _id: "_design/d", _rev: rev, views: {} } }] },
    }));
    const events: StoreEvent[] = [];
    const handle = createCouchStore({ url: base, logger: createRecordingLogger(), state: createMemoryStatePort(), heartbeatMs: 60_000 });
    await handle.events.start((e) => events.push(e));
    await waitFor(() => events.some((e) => e.type === "ddoc-updated"), "ddoc-updated");
    expect(events).toContainEqual({ type: "ddoc-updated", db: "fx_db", ddoc: "_design/d" });
    await handle.close();
    // Restarted with the same saved state and an unchanged rev: view-updated, no ddoc-updated.
    events.length = 0;
    const state = createMemoryStatePort();
    const first = createCouchStore({ url: base, logger: createRecordingLogger(), state, heartbeatMs: 60_000 });
    await first.events.start(() => undefined);
    await waitFor(async () => JSON.stringify(await state.load(EVENTS_STATE_KEY)).includes(rev), "revs saved");
    await first.close();
    const second = createCouchStore({ url: base, logger: createRecordingLogger(), state, heartbeatMs: 60_000 });
    await second.events.start((e) => events.push(e));
    await waitFor(() => events.some((e) => e.type === "view-updated"), "view-updated");
    expect(events.some((e) => e.type === "ddoc-updated")).toBe(false);
    await second.close();
  });
});

describe("design doc checks", () => {
  it("a listing's total_rows is the doc count later writes are compared with: a db without design docs is not listed again while its count holds", async () => {
    let feeds = 0;
    server.route("GET", (p) => p.startsWith("/_db_updates?"), () => {
      feeds += 1;
      const row = `{"db_name":"fx_db","type":"updated","seq":"${feeds}-x"}\n`;
      return feeds < 4 ? { status: 200, body: `${row}{"last_seq":"${feeds}-x"}\n`, raw: true } : { status: 200, body: row, raw: true, hold: true };
    });
    server.route("GET", (p) => p.startsWith("/fx_db/_all_docs?"), { status: 200, body: { total_rows: 5, offset: 0, rows: [] } });
    const info = { db_name: "fx_db", update_seq: "9-x", doc_count: 5, doc_del_count: 0, sizes: { file: 100, active: 50, external: 50 }, compact_running: false };
    server.route("POST", "/_dbs_info", { status: 200, body: [{ key: "fx_db", info }] });
    const events: StoreEvent[] = [];
    const handle = createCouchStore({ url: base, logger: createRecordingLogger(), state: createMemoryStatePort(), heartbeatMs: 60_000, ddocChecks: { minIntervalMs: 1, maxIntervalMs: 1 } });
    await handle.events.start((e) => events.push(e));
    await waitFor(() => events.filter((e) => e.type === "db-updated").length >= 4, "four updates");
    await waitFor(() => server.requests.some((r) => r.path === "/_dbs_info"), "a doc count looked at after the listing");
    await new Promise((r) => setTimeout(r, 50));
    expect(server.requests.filter((r) => r.path.startsWith("/fx_db/_all_docs?"))).toHaveLength(1);
    await handle.close();
  });
});

describe("polling fallback", () => {
  it("_db_updates 400 (PouchDB Server) -> polling _all_dbs + db seqs; changes since the last poll become events", async () => {
    server.route("GET", (p) => p.startsWith("/_db_updates?"), replyOf(exchange("84")));
    server.route("POST", "/_dbs_info", { status: 404, body: { error: "not_found", reason: "no_db_file" } });
    let dbs: Record<string, number> = { a: 1, b: 1 };
    server.route("GET", "/_all_dbs", () => ({ status: 200, body: Object.keys(dbs) }));
    server.route("GET", (p) => /^\/[a-z]+$/.test(p), (req) => {
      const name = req.path.slice(1);
      const seq = dbs[name];
      return seq === undefined ? { status: 404, body: { error: "not_found" } } : { status: 200, body: { db_name: name, update_seq: seq, disk_size: 100 } };
    });
    server.route("GET", (p) => /\/_all_docs/.test(p), { status: 200, body: { rows: [] } });
    const events: StoreEvent[] = [];
    const logger = createRecordingLogger();
    const handle = createCouchStore({ url: base, logger, state: createMemoryStatePort(), pollIntervalMs: 20 });
    await handle.events.start((e) => events.push(e));
    expect(handle.events.status()).toMatchObject({ mode: "polling" });
    expect(handle.events.status().detail).toContain("400");
    dbs = { a: 2, c: 1 };
    await waitFor(() => events.length >= 3, "three events");
    expect(events).toEqual(expect.arrayContaining([{ type: "db-updated", db: "a" }, { type: "db-created", db: "c" }, { type: "db-deleted", db: "b" }]));
    expect(logger.lines.filter((l) => l.msg.includes("falling back to polling")).length).toBe(1);
    await handle.close();
  });

  it("the server going away: status says so, polling keeps trying and resumes", async () => {
    let up = true;
    server.route("GET", (p) => p.startsWith("/_db_updates?"), { status: 404, body: { error: "not_found", reason: "Database does not exist." } });
    server.route("POST", "/_dbs_info", (req) => (up ? { status: 200, body: (JSON.parse(req.body) as { keys: string[] }).keys.map((k) => ({ key: k, info: { db_name: k, update_seq: "1-x", sizes: { file: 1, active: 1 } } })) } : { status: 0, body: null, silent: true }));
    server.route("GET", "/_all_dbs", () => (up ? { status: 200, body: ["a"] } : { status: 0, body: null, silent: true }));
    const handle = createCouchStore({ url: base, logger: createRecordingLogger(), state: createMemoryStatePort(), pollIntervalMs: 20, requestTimeoutMs: 100, retry: { retries: 0 } });
    await handle.events.start(() => undefined);
    expect(handle.events.status()).toMatchObject({ mode: "polling", connected: true });
    up = false;
    await waitFor(() => handle.events.status().connected === false, "outage seen");
    expect(handle.events.status().detail).toMatch(/unreachable/);
    up = true;
    await waitFor(() => handle.events.status().connected === true, "back");
    await handle.close();
  });
});

describe("the design doc worker's pauses", () => {
  it("leave no abort listener behind on the source's signal (one per pause used to pile up)", async () => {
    server.route("GET", (p) => p.startsWith("/_db_updates?"), { status: 200, body: "", raw: true, hold: true });
    const handle = createCouchStore({ url: base, logger: createRecordingLogger(), state: createMemoryStatePort(), heartbeatMs: 60_000 });
    await handle.events.start(() => undefined);
    // White-box: the worker's pause and the signal it listens to are private.
    const source = handle.events as unknown as { abort?: AbortController; sleepUnlessStopped(delayMs: number): Promise<void> };
    const signal = source.abort!.signal;
    const before = getEventListeners(signal, "abort").length;
    for (let i = 0; i < 20; i++) await source.sleepUnlessStopped(1);
    expect(getEventListeners(signal, "abort").length).toBe(before);
    await handle.close();
  });
});
