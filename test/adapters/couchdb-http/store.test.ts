/**
 * The adapter over real HTTP against a loopback replay server serving the
 * recorded CouchDB 3.4.3 exchanges: request building, status handling, jobs,
 * shards, retries, auth, redaction and health logging.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCouchStore, CouchHttpError, CouchUnavailableError, CouchDecodeError } from "../../../src/adapters/couchdb-http/index.js";
import { exchange } from "../../support/fixtures.js";
import { ReplayServer, replyOf } from "../../support/replay-server.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import { freePort } from "../../support/pouchdb-server.js";
import { fastScheduler } from "./helpers.js";

let server: ReplayServer;
let base: string;
beforeEach(async () => {
  server = new ReplayServer();
  base = await server.start();
});
afterEach(async () => {
  await server.stop();
});

const make = (extra: Partial<Parameters<typeof createCouchStore>[0]> = {}) => {
  const logger = createRecordingLogger();
  const scheduler = fastScheduler();
  const state = createMemoryStatePort();
  const handle = createCouchStore({
    url: base.replace("http://", "http://admin:s3cr3t-pw@"),
    logger,
    scheduler,
    state,
    jobPollIntervalMs: 1,
    retry: { retries: 3, baseMs: 100, capMs: 1_000 },
    random: () => 0.5,
    ...extra,
  });
  return { ...handle, logger, scheduler, state };
};

/** Serve `replies` in order at `method path` (the last one repeats). */
const sequence = (method: string, path: string | ((p: string) => boolean), replies: ReturnType<typeof replyOf>[]) => {
  let i = 0;
  server.route(method, path, () => replies[Math.min(i++, replies.length - 1)] as ReturnType<typeof replyOf>);
};

describe("db info", () => {
  it("GET /{db} with basic auth from the URL; missing db -> undefined", async () => {
    server.use(exchange("24")).use(exchange("28"));
    const { store, close } = make();
    const info = await store.dbInfo("fx_db");
    expect(info).toMatchObject({ db: "fx_db", fileBytes: 8364454, activeBytes: 1865526, updateSeqNumber: 18000 });
    expect(await store.dbInfo("fx_missing")).toBeUndefined();
    const req = server.requests[0];
    expect(req?.headers.authorization).toBe(`Basic ${Buffer.from("admin:s3cr3t-pw").toString("base64")}`);
    expect(req?.headers.accept).toBe("application/json");
    await close();
  });

  it("POST /_dbs_info batches of at most 100 keys; per-key not_found is absent from the result", async () => {
    const fx = exchange("27");
    server.route("POST", "/_dbs_info", (req) => {
      const keys = (JSON.parse(req.body) as { keys: string[] }).keys;
      const known = fx.response.body as Array<{ key: string }>;
      return { status: 200, body: keys.map((k) => known.find((e) => e.key === k) ?? { key: k, error: "not_found" }) };
    });
    const { store, close } = make();
    const names = ["fx_db", "fx_q1", "fx_missing", ...Array.from({ length: 230 }, (_, i) => `other_${i}`)];
    const infos = await store.dbInfos?.(names);
    expect([...(infos?.keys() ?? [])]).toEqual(["fx_db", "fx_q1"]);
    const posts = server.requests.filter((r) => r.path === "/_dbs_info");
    expect(posts.map((r) => (JSON.parse(r.body) as { keys: string[] }).keys.length)).toEqual([100, 100, 33]);
    expect(posts[0]?.headers["content-type"]).toBe("application/json");
    await close();
  });

  /** A server whose `[chttpd] max_db_number_for_dbs_info_req` is `limit`: more keys get CouchDB 3.4.3's refusal (as it answered here). */
  const dbsInfoWithLimit = (limit: number) =>
    server.route("POST", "/_dbs_info", (req) => {
      const keys = (JSON.parse(req.body) as { keys: string[] }).keys;
      if (keys.length > limit) return { status: 400, body: { error: "bad_request", reason: "too_many_keys" } };
      return { status: 200, body: keys.map((key) => ({ key, info: { ...(exchange("24").response.body as object), db_name: key } })) };
    });
  const keysPerPost = () => server.requests.filter((r) => r.path === "/_dbs_info").map((r) => (JSON.parse(r.body) as { keys: string[] }).keys.length);

  it("a server with a lower [chttpd] max_db_number_for_dbs_info_req: too_many_keys narrows the batch down to the server's exact limit, says once which key to set, and is remembered", async () => {
    dbsInfoWithLimit(30);
    const { store, close, logger, status } = make();
    expect(status().dbsInfoKeysPerRequest).toBe(100);
    const names = Array.from({ length: 70 }, (_, i) => `db_${i}`);
    expect([...((await store.dbInfos?.(names))?.keys() ?? [])]).toEqual(names);
    // Refused at 70 and 35; 17 taken, then the middle of 17..34 (26) and what was left (27).
    expect(keysPerPost()).toEqual([70, 35, 17, 26, 27]);
    expect([...((await store.dbInfos?.(names))?.keys() ?? [])]).toEqual(names);
    // 31 refused, 29 and 30 taken: the limit is 30 exactly.
    expect(keysPerPost().slice(5)).toEqual([31, 29, 30, 11]);
    expect(store.dbInfosBatchSize).toBe(30);
    expect(status().dbsInfoKeysPerRequest).toBe(30);
    const warnings = logger.lines.filter((l) => l.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toContain("[chttpd] max_db_number_for_dbs_info_req");
    expect(logger.lines.filter((l) => l.msg.startsWith("learnt CouchDB's POST /_dbs_info key limit"))).toHaveLength(1);
    // Learnt: the next call asks for 30 a request, and nothing is refused.
    await store.dbInfos?.(names);
    expect(keysPerPost().slice(9)).toEqual([30, 30, 10]);
    await close();
  });

  it("dbsInfoMaxKeys (upholster's [chttpd] max_db_number_for_dbs_info_req) sizes every request from the first", async () => {
    dbsInfoWithLimit(20);
    const { store, close } = make({ dbsInfoMaxKeys: 20 });
    expect(store.dbInfosBatchSize).toBe(20);
    await store.dbInfos?.(Array.from({ length: 45 }, (_, i) => `db_${i}`));
    expect(keysPerPost()).toEqual([20, 20, 5]);
    await close();
  });

  it("falls back to one GET per db where _dbs_info is missing (PouchDB Server: 404)", async () => {
    server.route("POST", "/_dbs_info", { status: 404, body: { error: "not_found", reason: "no_db_file" } }).use(exchange("24")).use(exchange("28"));
    const { store, close, status } = make();
    const infos = await store.dbInfos?.(["fx_db", "fx_missing"]);
    expect([...(infos?.keys() ?? [])]).toEqual(["fx_db"]);
    expect(status().capabilities.dbsInfo).toBe(false);
    await store.dbInfos?.(["fx_db"]);
    expect(server.count("POST", "/_dbs_info")).toBe(1);
    await close();
  });

  it("a body of the wrong shape is an error naming endpoint and field, not a crash", async () => {
    server.route("GET", "/fx_db", { status: 200, body: { ...(exchange("24").response.body as object), sizes: { file: -5 } } });
    const { store, close } = make();
    await expect(store.dbInfo("fx_db")).rejects.toThrow(CouchDecodeError);
    await expect(store.dbInfo("fx_db")).rejects.toThrow(/GET \/fx_db: .*sizes\.file.*-5/);
    await close();
  });

  it("db names are URL-encoded (slashes as %2F)", async () => {
    server.route("GET", "/a%2Fb", { status: 200, body: { db_name: "a/b", update_seq: "3-x", sizes: { file: 10, active: 5 } } });
    const { store, close } = make();
    expect((await store.dbInfo("a/b"))?.updateSeqNumber).toBe(3);
    await close();
  });
});

describe("compaction jobs", () => {
  it("POST /{db}/_compact with Content-Type: application/json; done from compact_running + _active_tasks; compacted seq kept", async () => {
    sequence("GET", "/fx_db", [replyOf(exchange("25")), replyOf(exchange("37")), replyOf(exchange("39"))]);
    sequence("GET", "/_active_tasks", [replyOf(exchange("38")), replyOf(exchange("58"))]);
    server.use(exchange("36"));
    const { store, close, state } = make();
    const job = await store.startJob({ kind: "db", db: "fx_db" });
    const outcome = await job.done;
    const before = (exchange("25").response.body as { sizes: { file: number } }).sizes.file;
    const after = (exchange("39").response.body as { sizes: { file: number } }).sizes.file;
    expect(outcome).toEqual({ ok: true, reclaimedBytes: before - after });
    const post = server.requests.find((r) => r.method === "POST");
    expect(post?.path).toBe("/fx_db/_compact");
    expect(post?.headers["content-type"]).toBe("application/json");
    expect(job.suspend).toBeUndefined(); // CouchDB cannot pause a compaction
    const info = await store.dbInfo("fx_db");
    expect(info?.compactedSeqNumber).toBe(19000);
    expect(JSON.stringify(await Promise.all(state.keys().map((key) => state.load(key))))).toContain("19000");
    await close();
  });

  it("a db compaction's end is read from the infos others fetch (the daemon's _dbs_info batches): no GET of its own", async () => {
    const bodies = ["25", "37", "39"].map((n) => exchange(n).response.body);
    let served = 0;
    server.route("POST", "/_dbs_info", () => ({ status: 200, body: [{ key: "fx_db", info: bodies[Math.min(served++, bodies.length - 1)] }] }));
    server.use(exchange("36"));
    // Timers never fire: only the batches can end the job.
    const idle = { nowMs: () => Date.now(), setTimeout: () => () => undefined };
    const { store, close } = make({ scheduler: idle });
    await store.dbInfos?.(["fx_db"]); // the precheck that led to the start
    const job = await store.startJob({ kind: "db", db: "fx_db" });
    let ended = false;
    void job.done.then(() => (ended = true));
    for (let i = 0; i < 5 && !ended; i++) {
      await new Promise((r) => setTimeout(r, 5)); // later than the start, on the clock the watcher compares
      await store.dbInfos?.(["fx_db"]);
      await new Promise((r) => setImmediate(r));
    }
    const before = (bodies[0] as { sizes: { file: number } }).sizes.file;
    const after = (bodies[2] as { sizes: { file: number } }).sizes.file;
    expect(await job.done).toEqual({ ok: true, reclaimedBytes: before - after });
    expect(server.requests.filter((r) => r.method === "GET").map((r) => r.path)).toEqual([]);
    expect(server.requests.filter((r) => r.path === "/_dbs_info")).toHaveLength(3);
    await close();
  });

  it("the daemon reads a running db's info every job_poll_interval_ms (jobLookIntervalMs): the watcher waits half an interval more before asking itself", async () => {
    sequence("GET", "/fx_db", [replyOf(exchange("39"))]);
    server.route("POST", "/_dbs_info", () => ({ status: 200, body: [{ key: "fx_db", info: exchange("25").response.body }] }));
    server.use(exchange("36"));
    // Timers fire only when the test says.
    const timers: { delayMs: number; fn: () => void }[] = [];
    const manual = {
      nowMs: () => Date.now(),
      setTimeout: (fn: () => void, delayMs: number) => {
        timers.push({ fn, delayMs });
        return () => undefined;
      },
    };
    const { store, close } = make({ scheduler: manual, jobPollIntervalMs: 1_000 });
    expect(store.jobLookIntervalMs).toBe(1_000);
    await store.dbInfos?.(["fx_db"]); // the precheck that led to the start
    const job = await store.startJob({ kind: "db", db: "fx_db" });
    for (let i = 0; i < 100 && !timers.some((t) => t.delayMs === 1_500); i++) await new Promise((r) => setImmediate(r));
    const own = timers.find((t) => t.delayMs === 1_500);
    expect(own, `timers: ${JSON.stringify(timers.map((t) => t.delayMs))}`).toBeDefined();
    expect(server.count("GET", "/fx_db")).toBe(0);
    own!.fn(); // no look came: it asks
    expect((await job.done).ok).toBe(true);
    expect(server.count("GET", "/fx_db")).toBe(1);
    await close();
    const shards = make({ granularity: "shard" });
    expect(shards.store.jobLookIntervalMs).toBeUndefined(); // shard objects are watched by the adapter alone
    await shards.close();
  });

  it("a 415 (no Content-Type) or 404 (missing db) rejects naming the endpoint", async () => {
    server.use(exchange("25"));
    server.route("POST", "/fx_db/_compact", replyOf(exchange("35")));
    server.use(exchange("28"));
    const { store, close } = make();
    await expect(store.startJob({ kind: "db", db: "fx_db" })).rejects.toThrow(/POST \/fx_db\/_compact: HTTP 415 bad_content_type/);
    await expect(store.startJob({ kind: "db", db: "fx_missing" })).rejects.toThrow(/HTTP 404/);
    await close();
  });

  it("403 for a non-admin is an error, not retried", async () => {
    server.use(exchange("25"));
    server.route("POST", "/fx_db/_compact", replyOf(exchange("93")));
    const { store, close } = make();
    await expect(store.startJob({ kind: "db", db: "fx_db" })).rejects.toThrow(/HTTP 403 forbidden/);
    expect(server.count("POST", "/fx_db/_compact")).toBe(1);
    await close();
  });

  it("attaching to a running compaction sends no _compact and waits for it", async () => {
    sequence("GET", "/fx_big", [replyOf(exchange("46")), { status: 200, body: { ...(exchange("46").response.body as object), compact_running: true } }, { status: 200, body: { ...(exchange("46").response.body as object), compact_running: false, sizes: { file: 16_000_000, active: 15_600_000 } } }]);
    sequence("GET", "/_active_tasks", [replyOf(exchange("48")), replyOf(exchange("58"))]);
    const { store, close } = make();
    const job = await store.attachJob({ kind: "db", db: "fx_big" });
    const outcome = await job.done;
    expect(outcome.ok).toBe(true);
    expect(server.count("POST", /_compact/)).toBe(0);
    await close();
  });

  it("view compaction: POST /{db}/_compact/{ddoc}; with no sign it ran, done when the view_compaction task is gone", async () => {
    // Not running and the same size: it may not have begun yet, so the task list decides.
    sequence("GET", "/fx_big/_design/big/_info", [replyOf(exchange("49")), replyOf(exchange("49")), replyOf(exchange("49"))]);
    sequence("GET", "/_active_tasks", [replyOf(exchange("50")), replyOf(exchange("58"))]);
    server.route("POST", "/fx_big/_compact/big", replyOf(exchange("62")));
    const { store, close } = make();
    const job = await store.startJob({ kind: "view", db: "fx_big", ddoc: "_design/big" });
    const outcome = await job.done;
    expect(outcome.ok).toBe(true);
    // _active_tasks listed the view compaction first: the job waited for it to end.
    expect(server.count("GET", "/_active_tasks")).toBe(2);
    await close();
  });

  it("view compaction: done as soon as the index file shrank (the swap at its end), without asking for tasks", async () => {
    sequence("GET", "/fx_big/_design/big/_info", [replyOf(exchange("49")), replyOf(exchange("52"))]);
    server.route("POST", "/fx_big/_compact/big", replyOf(exchange("62")));
    const { store, close } = make();
    const job = await store.startJob({ kind: "view", db: "fx_big", ddoc: "_design/big" });
    expect((await job.done).ok).toBe(true);
    expect(server.count("GET", "/_active_tasks")).toBe(0);
    await close();
  });

  it("view cleanup: POST /{db}/_view_cleanup 202 -> done", async () => {
    server.use(exchange("64"));
    const { store, close } = make();
    expect(await (await store.startJob({ kind: "cleanup", db: "fx_db" })).done).toEqual({ ok: true });
    expect(server.requests[0]?.headers["content-type"]).toBe("application/json");
    await close();
  });

  it("view info (59) and a missing ddoc (87) -> undefined; PouchDB's 'Not implemented.' -> undefined", async () => {
    server.use(exchange("59")).use(exchange("87"));
    server.route("GET", "/p/_design/d/_info", { status: 200, body: { view_index: "Not implemented." } });
    const { store, close } = make();
    expect((await store.viewIndexInfo("fx_db", "_design/d"))?.updateSeqNumber).toBeGreaterThan(0);
    expect(await store.viewIndexInfo("fx_db", "_design/missing")).toBeUndefined();
    expect(await store.viewIndexInfo("p", "_design/d")).toBeUndefined();
    await close();
  });

  it("design docs from the _design/ key range of _all_docs (rows as in 71)", async () => {
    server.route("GET", (p) => p.startsWith("/fx_db/_all_docs?"), replyOf(exchange("71")));
    const { store, close } = make();
    expect((await store.designDocs("fx_db")).map((d) => d.id)).toEqual(["_design/d", "_design/mango-idx", "_design/noauto"]);
    const q = new URL(`http://x${server.requests[0]?.path ?? ""}`).searchParams;
    expect([q.get("startkey"), q.get("endkey"), q.get("include_docs")]).toEqual(['"_design/"', '"_design0"', "true"]);
    await close();
  });
});

describe("shard granularity", () => {
  it("lists shards of every node in /_membership, reads shard info and compacts a single shard", async () => {
    const node = encodeURIComponent("couchdb@127.0.0.1");
    server.use(exchange("04"));
    server.route("GET", `/_node/${node}/_all_dbs`, replyOf(exchange("32")));
    const shard = "shards/00000000-7fffffff/fx_db.1795281095";
    sequence("GET", `/_node/${node}/${encodeURIComponent(shard)}`, [replyOf(exchange("33")), replyOf(exchange("33")), replyOf(exchange("40"))]);
    server.route("POST", `/_node/${node}/${encodeURIComponent(shard)}/_compact`, replyOf(exchange("41")));
    server.route("GET", "/_active_tasks", replyOf(exchange("58")));
    const { store, close } = make({ granularity: "shard" });
    const names = await store.listDbs();
    expect(names).toContain(`${shard}@couchdb@127.0.0.1`);
    expect(names.some((n) => n.startsWith("_dbs"))).toBe(false);
    expect(names.length).toBe(9);
    const info = await store.dbInfo(`${shard}@couchdb@127.0.0.1`);
    expect(info).toMatchObject({ updateSeqNumber: 9080, compactedSeqNumber: 0, fileBytes: 4272342 });
    const job = await store.startJob({ kind: "db", db: `${shard}@couchdb@127.0.0.1` });
    expect((await job.done).ok).toBe(true);
    expect(server.count("POST", `/_node/${node}/${encodeURIComponent(shard)}/_compact`)).toBe(1);
    await close();
  });
});

describe("retries, timeouts and health", () => {
  it("5xx and 429 are retried with capped exponential back-off and jitter", async () => {
    sequence("GET", "/fx_db", [{ status: 503, body: { error: "unavailable" } }, { status: 429, body: { error: "too_many_requests" } }, { status: 500, body: { error: "x" } }, replyOf(exchange("24"))]);
    const { store, close, scheduler } = make();
    expect((await store.dbInfo("fx_db"))?.updateSeqNumber).toBe(18000);
    expect(server.count("GET", "/fx_db")).toBe(4);
    // random() = 0.5: half of min(cap 1000, 100 * 2^attempt)
    expect(scheduler.delays).toEqual([50, 100, 200]);
    await close();
  });

  it("gives up after the retries with the last status", async () => {
    server.route("GET", "/fx_db", { status: 503, body: { error: "unavailable", reason: "down" } });
    const { store, close } = make();
    await expect(store.dbInfo("fx_db")).rejects.toThrow(/GET \/fx_db: HTTP 503/);
    expect(server.count("GET", "/fx_db")).toBe(4);
    await close();
  });

  it("4xx is not retried (400, 401 named, 409)", async () => {
    server.route("GET", "/_active_tasks", replyOf(exchange("16")));
    server.route("GET", "/Bad_Name", replyOf(exchange("89")));
    const { store, close } = make();
    await expect(store.activeTasks()).rejects.toThrow(/GET \/_active_tasks: HTTP 401 unauthorized: Name or password is incorrect\..*server admin/);
    await expect(store.dbInfo("Bad_Name")).rejects.toThrow(CouchHttpError);
    expect(server.requests.length).toBe(2);
    await close();
  });

  it("a request that gets no answer times out and is retried", async () => {
    sequence("GET", "/fx_db", [{ status: 0, body: null, silent: true }, replyOf(exchange("24"))]);
    const { store, close } = make({ requestTimeoutMs: 300 });
    expect((await store.dbInfo("fx_db"))?.fileBytes).toBe(8364454);
    expect(server.count("GET", "/fx_db")).toBe(2);
    await close();
  });

  it("connection refused: retried, then a clear error without credentials; logged once per state change", async () => {
    const port = await freePort(); // nothing listens there
    const logger = createRecordingLogger();
    const handle = createCouchStore({ url: `http://admin:s3cr3t-pw@127.0.0.1:${port}/prefix`, logger, scheduler: fastScheduler(), retry: { retries: 2, baseMs: 1, capMs: 2 } });
    for (let i = 0; i < 5; i++) {
      const err = await handle.store.dbInfo("fx_db").then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(CouchUnavailableError);
      expect(String((err as Error).message)).toMatch(/GET \/fx_db: CouchDB server unreachable: ECONNREFUSED/);
      expect(String((err as Error).message)).not.toContain("s3cr3t");
    }
    expect(handle.status().health.reachable).toBe(false);
    expect(handle.status().server).toBe(`http://127.0.0.1:${port}/prefix`);
    expect(logger.lines.filter((l) => l.level === "warn").length).toBe(1);
    expect(logger.text()).not.toContain("s3cr3t");
    expect(logger.text()).not.toContain(Buffer.from("admin:s3cr3t-pw").toString("base64"));
    await handle.close();
  });

  it("down -> up is logged once, and the path prefix is kept", async () => {
    let up = false;
    server.route("GET", "/prefix/fx_db", () => (up ? replyOf(exchange("24")) : { status: 0, body: null, silent: true }));
    const { store, close, logger, status } = make({ url: `${base.replace("http://", "http://admin:s3cr3t-pw@")}/prefix/`, requestTimeoutMs: 100, retry: { retries: 1, baseMs: 1, capMs: 1 } });
    await expect(store.dbInfo("fx_db")).rejects.toThrow(CouchUnavailableError);
    await expect(store.dbInfo("fx_db")).rejects.toThrow(CouchUnavailableError);
    up = true;
    await store.dbInfo("fx_db");
    await store.dbInfo("fx_db");
    expect(status().health.reachable).toBe(true);
    expect(logger.lines.filter((l) => l.level !== "debug").map((l) => l.msg)).toEqual(["CouchDB server unreachable; retrying in the background", "CouchDB server reachable again"]);
    await close();
  });
});

describe("cookie sessions", () => {
  it("POST /_session once, then the AuthSession cookie; a 401 logs in again", async () => {
    let logins = 0;
    server.route("POST", "/_session", () => {
      logins += 1;
      return { ...replyOf(exchange("13")), headers: { "set-cookie": `AuthSession=tok${logins}; Version=1; Path=/; HttpOnly` } };
    });
    let calls = 0;
    server.route("GET", "/_active_tasks", (req) => {
      calls += 1;
      // The first cookie "expires" after one use.
      if (req.headers.cookie === "AuthSession=tok1" && calls > 1) return replyOf(exchange("15"));
      return req.headers.cookie?.startsWith("AuthSession=tok") === true ? replyOf(exchange("14")) : replyOf(exchange("15"));
    });
    const { store, close, logger } = make({ url: base, auth: { username: "admin", password: "s3cr3t-pw", session: true } });
    expect(await store.activeTasks()).toEqual([]);
    expect(await store.activeTasks()).toEqual([]);
    expect(logins).toBe(2);
    const login = server.requests.find((r) => r.path === "/_session");
    expect(JSON.parse(login?.body ?? "{}")).toEqual({ name: "admin", password: "s3cr3t-pw" });
    expect(server.requests.filter((r) => r.path === "/_active_tasks").every((r) => r.headers.authorization === undefined)).toBe(true);
    expect(logger.text()).not.toContain("tok");
    await close();
  });
});
