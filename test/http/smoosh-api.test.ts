/**
 * upholster's HTTP API over loopback with fetch: the real server, the real
 * daemon, the in-memory store; virtual time so channels stay paused and
 * queues stay observable.
 */
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { createMemoryStore, type MemoryStore } from "../../src/adapters/memory/index.js";
import type { CompactionStore } from "../../src/ports/store.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";
import { createUpholster, type Upholster } from "../../src/runtime/upholster.js";
import { growGarbage, START_MS } from "../runtime/world.js";

const fixture = (name: string): { response: { status: number; body: unknown } } =>
  JSON.parse(readFileSync(new URL(`../fixtures/couchdb-3.4.3/${name}`, import.meta.url), "utf8"));

let upholster: Upholster;
let store: MemoryStore;
let base: string;
const viewInfoAsked: string[] = [];

beforeAll(async () => {
  const scheduler = new VirtualScheduler({ startMs: START_MS });
  store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
  growGarbage(store, "grown", 1500, 4);
  for (const ddoc of ["_design/short", "_design/long"]) store.putDesignDoc("grown", ddoc, { views: { v: { map: "function (doc) { emit(doc._id, 1); }" } } });
  const spied: CompactionStore = {
    listDbs: () => store.listDbs(),
    dbInfo: (db) => store.dbInfo(db),
    dbInfos: (dbs) => store.dbInfos(dbs),
    designDocs: (db) => store.designDocs(db),
    viewIndexInfo: (db, ddoc) => {
      viewInfoAsked.push(`${db} ${ddoc}`);
      return store.viewIndexInfo(db, ddoc);
    },
    startJob: (o) => store.startJob(o),
    attachJob: (o) => store.attachJob(o),
  };
  upholster = createUpholster({
    store: spied,
    events: store.createEventSource(),
    scheduler,
    logger: createRecordingLogger(),
    http: { port: 0, host: "127.0.0.1" },
  });
  await upholster.start();
  base = upholster.httpAddress()!.url;
});

afterAll(async () => {
  await upholster.stop();
});

const post = (path: string, body?: string, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: "POST", body, headers: { "Content-Type": "application/json", ...headers } });
const json = async (response: Response): Promise<unknown> => JSON.parse(await response.text());
const settle = () => upholster.smoosh.whenIdle();

describe("GET /_smoosh/status", () => {
  it("has exactly CouchDB 3.4.3's shape, members and key order (fixture 09)", async () => {
    const expected = fixture("09-smoosh-status-idle.json").response.body;
    for (const path of ["/_smoosh/status", "/_node/_local/_smoosh/status", "/_node/upholster@127.0.0.1/_smoosh/status"]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("application/json");
      const text = await response.text();
      expect(JSON.parse(text)).toEqual(expected);
      // Same member order per channel as CouchDB writes it: waiting, starting, active.
      const channel = (JSON.parse(text) as { channels: Record<string, object> }).channels["ratio_dbs"]!;
      expect(Object.keys(channel)).toEqual(["waiting", "starting", "active"]);
    }
  });

  it("answers 405 with CouchDB's body for another method", async () => {
    const response = await post("/_smoosh/status");
    expect(response.status).toBe(405);
    expect(await json(response)).toEqual({ error: "method_not_allowed", reason: "Only GET allowed" });
    expect(response.headers.get("allow")).toBe("GET");
  });
});

describe("operator commands", () => {
  it("suspend and resume answer {ok:true}; a wrong method is 405 'Only POST allowed'", async () => {
    for (const command of ["suspend", "resume", "flush"]) {
      const response = await post(`/_smoosh/${command}`);
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual({ ok: true });
    }
    const wrong = await fetch(`${base}/_smoosh/suspend`);
    expect(wrong.status).toBe(405);
    expect(await json(wrong)).toEqual({ error: "method_not_allowed", reason: "Only POST allowed" });
  });

  it("enqueue queues a db (channels are still paused), flush empties the queues", async () => {
    const response = await post("/_smoosh/enqueue", JSON.stringify({ db: "grown" }));
    expect(response.status).toBe(202);
    expect(await json(response)).toEqual({ ok: true });
    await settle();
    const status = (await json(await fetch(`${base}/_smoosh/status`))) as { channels: Record<string, { waiting: { size: number; max: number } }> };
    expect(status.channels["ratio_dbs"]!.waiting.size).toBe(1);
    expect(status.channels["ratio_dbs"]!.waiting.max).toBeGreaterThan(2);

    expect((await post("/_smoosh/flush")).status).toBe(200);
    await settle();
    expect(upholster.smooshStatus().channels["ratio_dbs"]!.waiting.size).toBe(0);
  });

  it("enqueue accepts a design doc with or without its _design/ prefix", async () => {
    viewInfoAsked.length = 0;
    expect((await post("/_smoosh/enqueue", JSON.stringify({ db: "grown", ddoc: "short" }))).status).toBe(202);
    expect((await post("/_smoosh/enqueue", JSON.stringify({ db: "grown", ddoc: "_design/long" }))).status).toBe(202);
    await settle();
    // Asked by the route (does it exist?) and by the check that queues it.
    expect([...new Set(viewInfoAsked)].sort()).toEqual(["grown _design/long", "grown _design/short"]);
  });

  it("enqueue_all takes scope dbs, views, or nothing (both)", async () => {
    for (const body of [JSON.stringify({ scope: "dbs" }), JSON.stringify({ scope: "views" }), undefined, "{}"]) {
      const response = await post("/_smoosh/enqueue_all", body);
      expect(response.status).toBe(202);
    }
  });

  it.each([
    ["/_smoosh/enqueue", "{\"db\": ", "the request body is not JSON"],
    ["/_smoosh/enqueue", "not json", "the request body is not JSON"],
    ["/_smoosh/enqueue", "{}", "db: expected"],
    ["/_smoosh/enqueue", "{\"db\":42}", "got 42"],
    ["/_smoosh/enqueue", "{\"db\":\"ok\",\"ddoc\":7}", "ddoc: expected"],
    ["/_smoosh/enqueue", "[1,2]", "request body"],
    ["/_smoosh/enqueue", "null", "request body"],
    ["/_smoosh/enqueue_all", "{\"scope\":\"everything\"}", "\"everything\""],
  ])("POST %s %s -> 400 naming the field and value", async (path, body, mentions) => {
    const response = await post(path, body);
    expect(response.status).toBe(400);
    const answer = (await json(response)) as { error: string; reason: string };
    expect(answer.error).toBe("bad_request");
    expect(answer.reason).toContain(mentions);
  });

  it("a missing field is named as missing", async () => {
    const answer = (await json(await post("/_smoosh/enqueue", "{\"ddoc\":\"x\"}"))) as { reason: string };
    expect(answer.reason).toMatch(/^db: expected .* got nothing \(the field is missing\)$/);
  });

  it("a db name CouchDB would refuse is CouchDB's 400 naming the rule (fixture 89); over 238 characters too", async () => {
    const bad = await post("/_smoosh/enqueue", JSON.stringify({ db: "Bad Name" }));
    expect(bad.status).toBe(400);
    const couch = fixture("89-create-db-bad-name.json").response.body as { error: string; reason: string };
    expect(await json(bad)).toEqual({ error: couch.error, reason: couch.reason.replace("'Bad_Name'", "'Bad Name'") });
    const long = await post("/_smoosh/enqueue", JSON.stringify({ db: "a".repeat(239) }));
    expect(long.status).toBe(400);
    expect(await json(long)).toMatchObject({ error: "database_name_too_long", reason: expect.stringContaining("238 characters at most") });
    for (const db of ["a".repeat(238), "_users", "team/_replicator", "shards/00000000-7fffffff/grown.1700000000"]) {
      expect((await post("/_smoosh/enqueue", JSON.stringify({ db }))).status, db).toBe(404);
    }
  });

  it("a db or design doc that does not exist is CouchDB's 404 (fixtures 42, 63), not 202", async () => {
    const db = await post("/_smoosh/enqueue", JSON.stringify({ db: "nope" }));
    expect(db.status).toBe(404);
    expect(await json(db)).toEqual(fixture("42-compact-missing-db.json").response.body);
    const ddoc = await post("/_smoosh/enqueue", JSON.stringify({ db: "grown", ddoc: "nope" }));
    expect(ddoc.status).toBe(404);
    expect(await json(ddoc)).toEqual(fixture("63-compact-view-missing-ddoc.json").response.body);
  });

  it("property: any JSON body gets 202 (the db exists), 404 (it does not) or a 400 with a reason, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.jsonValue(), fc.record({ db: fc.oneof(fc.jsonValue(), fc.constant("grown")), ddoc: fc.option(fc.jsonValue(), { nil: undefined }) })),
        async (body) => {
          const response = await post("/_smoosh/enqueue", JSON.stringify(body));
          const answer = (await json(response)) as { ok?: boolean; error?: string; reason?: string };
          const shaped =
            typeof body === "object" && body !== null && !Array.isArray(body) && typeof (body as { db?: unknown }).db === "string" &&
            /^[a-z][a-z0-9_$()+/-]*$/.test((body as { db: string }).db) && (body as { db: string }).db.length <= 238 &&
            ((body as { ddoc?: unknown }).ddoc === undefined || (typeof (body as { ddoc?: unknown }).ddoc === "string" && !["", "_design/"].includes((body as { ddoc: string }).ddoc)));
          if (!shaped) {
            expect(response.status).toBe(400);
            expect(answer.reason?.length).toBeGreaterThan(0);
          } else if ((body as { db: string }).db === "grown" && (body as { ddoc?: unknown }).ddoc === undefined) {
            expect(response.status).toBe(202);
          } else {
            expect(response.status).toBe(404);
          }
        },
      ),
      { numRuns: 60 },
    );
    expect((await fetch(`${base}/_up`)).status).toBe(200);
  });
});

describe("limits and unknown paths", () => {
  it("413 for a body over 64 KiB (declared length)", async () => {
    const response = await post("/_smoosh/enqueue", JSON.stringify({ db: "x", pad: "p".repeat(70 * 1024) }));
    expect(response.status).toBe(413);
    expect(((await json(response)) as { error: string }).error).toBe("too_large");
  });

  it("413 for a chunked body that grows over 64 KiB", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${base}/_smoosh/enqueue`, { method: "POST", headers: { "Content-Type": "application/json", "Transfer-Encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      for (let i = 0; i < 80; i++) req.write("x".repeat(1024));
      req.end();
    });
    expect(status).toBe(413);
  });

  it("404 with CouchDB's body for unknown paths", async () => {
    for (const path of ["/nope", "/_smoosh/nope", "/_upholster/nope"]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(404);
      expect(await json(response)).toEqual({ error: "not_found", reason: "missing" });
    }
  });
});

describe("server endpoints", () => {
  it("GET / welcomes with the package version; GET /_up is ok", async () => {
    const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
    expect(await json(await fetch(`${base}/`))).toEqual({ upholster: "Welcome", version });
    expect(await json(await fetch(`${base}/_up`))).toEqual({ status: "ok" });
  });

  it("GET /_upholster/status shows the event source and subsystems; /_upholster/metrics the counters", async () => {
    const status = (await json(await fetch(`${base}/_upholster/status`))) as { running: boolean; events: { mode: string; connected: boolean }; subsystems: Record<string, unknown> };
    expect(status.running).toBe(true);
    expect(status.events).toEqual({ mode: "push", connected: true });
    expect(Object.keys(status.subsystems)).toContain("smoosh");
    const metrics = (await json(await fetch(`${base}/_upholster/metrics`))) as { smoosh: Record<string, number> };
    expect(metrics.smoosh.enqueued).toBeGreaterThan(0);
    expect(Object.keys(metrics.smoosh)).toEqual(expect.arrayContaining(["started", "finished", "failed", "bytesReclaimed"]));
  });
});
