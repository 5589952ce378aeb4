/** `/_upholster/indexing/*` over loopback: every input decoded, CouchDB's error bodies, admins only for actions. */
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../../src/adapters/memory/index.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createUpholster, type Upholster } from "../../../src/runtime/upholster.js";
import { realScheduler } from "../../../src/runtime/scheduler.js";
import { waitFor } from "../../support/wait-for.js";
import { VIEWS } from "./helpers.js";

let running: { upholster: Upholster; close(): Promise<void> } | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const ADMIN = `Basic ${Buffer.from("boss:secret").toString("base64")}`;

async function serve(): Promise<{ url: string; upholster: Upholster; store: ReturnType<typeof createMemoryStore> }> {
  const scheduler = realScheduler({ unref: true });
  const store = createMemoryStore({ scheduler });
  const upholster = createUpholster({
    store,
    events: store.createEventSource(),
    scheduler,
    logger: createRecordingLogger(),
    config: { admins: { boss: "secret" }, "ken.ignore": { hidden: "true" }, fabric: { index_updater_delay_msec: "20" } },
    http: { port: 0 },
  });
  await upholster.start();
  running = { upholster, close: async () => (await upholster.stop(), store.close()) };
  return { url: upholster.httpAddress()!.url, upholster, store };
}

/** `auth` null: anonymous. */
const call = async (url: string, method: string, path: string, body?: unknown, auth: string | null = ADMIN) => {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { ...(auth === null ? {} : { Authorization: auth }), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe("/_upholster/indexing", () => {
  it("enqueue, prioritize, lag: accepted for admins, decoded, with CouchDB's errors", async () => {
    const { url, store } = await serve();
    store.createDb("shop");
    store.putDesignDoc("shop", "app", VIEWS);
    store.writeDocs("shop", [{ _id: "a", n: 1 }]);
    expect(await call(url, "POST", "/_upholster/indexing/enqueue", { db: "shop" })).toEqual({ status: 202, body: { ok: true } });
    expect(await call(url, "POST", "/_upholster/indexing/prioritize", { db: "shop", ddoc: "app" })).toEqual({ status: 202, body: { ok: true } });
    expect(await call(url, "POST", "/_upholster/indexing/enqueue", { db: "Bad Name" })).toMatchObject({ status: 400, body: { error: "illegal_database_name" } });
    expect(await call(url, "POST", "/_upholster/indexing/enqueue", { db: 42 })).toMatchObject({ status: 400, body: { error: "bad_request", reason: expect.stringMatching(/^db: expected string, got 42/) } });
    expect(await call(url, "POST", "/_upholster/indexing/enqueue", "{nope")).toMatchObject({ status: 400, body: { reason: expect.stringMatching(/not JSON/) } });
    expect(await call(url, "POST", "/_upholster/indexing/enqueue", { db: "hidden" })).toMatchObject({ status: 409, body: { error: "conflict" } });
    expect(await call(url, "POST", "/_upholster/indexing/prioritize", { db: "shop", ddoc: "" })).toMatchObject({ status: 400, body: { reason: expect.stringMatching(/design document name/) } });
    expect(await call(url, "GET", "/_upholster/indexing/enqueue")).toMatchObject({ status: 405 });
    const lag = await waitFor(async () => {
      const answer = await call(url, "GET", "/_upholster/indexing/lag?db=shop&ddoc=app");
      return answer.status === 200 && (answer.body.indexes as { lag: number }[])[0]?.lag === 0 ? answer : undefined;
    }, "the view built");
    expect(lag.body).toEqual({ db: "shop", indexes: [expect.objectContaining({ type: "views", name: "_design/app", lag: 0, autoUpdate: true, updating: false })] });
    expect(await call(url, "GET", "/_upholster/indexing/lag?db=nothere")).toMatchObject({ status: 404, body: { error: "not_found", reason: "Database does not exist." } });
    expect(await call(url, "GET", "/_upholster/indexing/lag")).toMatchObject({ status: 400, body: { reason: expect.stringMatching(/^db: expected string/) } });
  });

  it("status shows the queue, the channels and each index; actions need an admin", async () => {
    const { url, store } = await serve();
    store.createDb("shop");
    store.putDesignDoc("shop", "app", VIEWS);
    const status = await waitFor(async () => {
      const answer = await call(url, "GET", "/_upholster/status");
      const indexing = (answer.body.subsystems as { indexing: { indexes: { state: string }[] } }).indexing;
      return indexing.indexes[0]?.state === "fresh" ? indexing : undefined;
    }, "the index fresh in status");
    expect(status).toMatchObject({ mode: "catch-up", channels: { batch: { active: 0, limit: 20 }, incremental: { active: 0, limit: 80 } }, queue: { pending: 0, queued: 0 } });
    expect(await call(url, "POST", "/_upholster/indexing/enqueue", { db: "shop" }, null)).toMatchObject({ status: 401, body: { error: "unauthorized" } });
    expect(await call(url, "POST", "/_upholster/indexing/deploy", { db: "shop", ddoc: "app", doc: VIEWS }, null)).toMatchObject({ status: 401 });
  });

  it("deploy: 202 with its status, GET follows it, a different body meanwhile is 409, DELETE cancels", async () => {
    const { url, store } = await serve();
    store.createDb("shop");
    store.putDesignDoc("shop", "app", VIEWS);
    const next = { views: { v: { map: "function (doc) { emit(1); }" } } };
    // The store switched off: the deploy stays in its first phase (retried) while we ask again.
    store.setAvailable(false);
    const started = await call(url, "POST", "/_upholster/indexing/deploy", { db: "shop", ddoc: "_design/app", doc: { _id: "_design/app", _rev: "1-x", ...next } });
    expect(started).toMatchObject({ status: 202, body: { ok: true, db: "shop", ddoc: "_design/app", resumed: false } });
    expect(await call(url, "POST", "/_upholster/indexing/deploy", { db: "shop", ddoc: "app", doc: { views: {} } })).toMatchObject({ status: 409 });
    expect(await call(url, "POST", "/_upholster/indexing/deploy", { db: "shop", ddoc: "app", doc: { _deleted: true } })).toMatchObject({ status: 400 });
    expect(await call(url, "POST", "/_upholster/indexing/deploy", { db: "shop", ddoc: "app", doc: [1] })).toMatchObject({ status: 400, body: { reason: expect.stringMatching(/^doc: expected a JSON object/) } });
    expect(await call(url, "POST", "/_upholster/indexing/deploy", { db: "shop", ddoc: "app", doc: next })).toMatchObject({ status: 202, body: { resumed: true } });
    store.setAvailable(true);
    const done = await waitFor(async () => {
      const answer = await call(url, "GET", "/_upholster/indexing/deploy?db=shop&ddoc=app");
      return answer.body.phase === "done" ? answer : undefined;
    }, "the deploy done");
    expect(done.body).toMatchObject({ db: "shop", ddoc: "_design/app", stage: "_design/app.upholster-stage", phase: "done" });
    expect(await call(url, "DELETE", "/_upholster/indexing/deploy?db=shop&ddoc=app")).toMatchObject({ status: 404 });
    expect(await call(url, "GET", "/_upholster/indexing/deploy?db=shop&ddoc=nope")).toMatchObject({ status: 404 });
  });
});
