/**
 * nano, a real CouchDB client, against upholster's embedded store over
 * loopback: databases, documents and design docs written and read back,
 * bulk writes, `_all_docs`, `_changes` (normal, longpoll, nano's
 * changesReader), views, and the errors nano turns into exceptions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import nano from "nano";
import { request, startDocumentsDaemon, type DocumentsDaemon } from "./harness.js";

interface Item {
  readonly type: string;
  readonly n: number;
}

let daemon: DocumentsDaemon;

beforeAll(async () => {
  daemon = await startDocumentsDaemon();
});
afterAll(() => daemon.stop());

/** nano rejects with the server's status and CouchDB's `error`/`reason`. */
const failure = async (promise: Promise<unknown>): Promise<{ statusCode: number; error: string; reason: string }> => {
  try {
    await promise;
  } catch (error) {
    return error as { statusCode: number; error: string; reason: string };
  }
  throw new Error("expected the request to fail");
};

describe("databases through nano", () => {
  it("creates, lists, reads and destroys a db", async () => {
    expect(await daemon.couch.db.create("nano-dbs")).toEqual({ ok: true });
    expect(await daemon.couch.db.list()).toContain("nano-dbs");
    const info = await daemon.couch.db.get("nano-dbs");
    expect(info).toMatchObject({ db_name: "nano-dbs", doc_count: 0, doc_del_count: 0, compact_running: false, cluster: { q: 1, n: 1, w: 1, r: 1 } });
    expect(await daemon.couch.db.destroy("nano-dbs")).toEqual({ ok: true });
    expect(await daemon.couch.db.list()).not.toContain("nano-dbs");
  });

  it("refuses what CouchDB refuses, with CouchDB's errors", async () => {
    await daemon.couch.db.create("nano-twice");
    expect(await failure(daemon.couch.db.create("nano-twice"))).toMatchObject({ statusCode: 412, error: "file_exists" });
    expect(await failure(daemon.couch.db.create("Bad_Name"))).toMatchObject({ statusCode: 400, error: "illegal_database_name" });
    expect(await failure(daemon.couch.db.get("nano-none"))).toMatchObject({ statusCode: 404, reason: "Database does not exist." });
    expect(await failure(daemon.couch.db.destroy("nano-none"))).toMatchObject({ statusCode: 404 });
  });

  it("takes names with a slash (sent as %2F)", async () => {
    await daemon.couch.db.create("team/sales");
    const db = daemon.couch.use<Item>("team/sales");
    await db.insert({ type: "item", n: 1 }, "a/b");
    expect((await db.get("a/b")).n).toBe(1);
    expect(await daemon.couch.db.list()).toContain("team/sales");
  });
});

describe("documents through nano", () => {
  beforeAll(async () => {
    await daemon.couch.db.create("nano-docs");
  });

  it("writes, reads, updates and deletes a document", async () => {
    const db = daemon.couch.use<Item>("nano-docs");
    const created = await db.insert({ type: "item", n: 1 }, "one");
    expect(created).toMatchObject({ ok: true, id: "one", rev: expect.stringMatching(/^1-[0-9a-f]{32}$/) });
    expect(await db.get("one")).toEqual({ _id: "one", _rev: created.rev, type: "item", n: 1 });
    const head = await db.head("one");
    expect(head.etag).toBe(`"${created.rev}"`);
    const updated = await db.insert({ _id: "one", _rev: created.rev, type: "item", n: 2 } as Item);
    expect(updated.rev).toMatch(/^2-/);
    expect(await failure(db.insert({ _id: "one", _rev: created.rev, type: "item", n: 3 } as Item))).toMatchObject({
      statusCode: 409,
      error: "conflict",
      reason: "Document update conflict.",
    });
    const deleted = await db.destroy("one", updated.rev);
    expect(deleted).toMatchObject({ ok: true, id: "one", rev: expect.stringMatching(/^3-/) });
    expect(await failure(db.get("one"))).toMatchObject({ statusCode: 404, reason: "deleted" });
    expect(await db.get("one", { rev: deleted.rev })).toEqual({ _id: "one", _rev: deleted.rev, _deleted: true });
    expect(await failure(db.get("never"))).toMatchObject({ statusCode: 404, reason: "missing" });
  });

  it("takes documents and bulk writes larger than the operator API's 64 KiB (CouchDB takes 8 MB documents)", async () => {
    const db = daemon.couch.use<Item & { blob: string }>("nano-docs");
    const blob = "x".repeat(1024 * 1024);
    const created = await db.insert({ type: "item", n: 9, blob }, "big");
    expect((await db.get("big")).blob).toHaveLength(blob.length);
    const bulk = await db.bulk({ docs: Array.from({ length: 200 }, (_, i) => ({ _id: `bulk-${i}`, type: "item", n: i, blob: "y".repeat(2000) })) });
    expect(bulk.every((r) => "rev" in r && r.rev !== undefined)).toBe(true);
    expect(created.ok).toBe(true);
  });

  it("generates an id for a document without one", async () => {
    const db = daemon.couch.use<Item>("nano-docs");
    const created = await db.insert({ type: "item", n: 7 });
    expect(created.id).toMatch(/^[0-9a-f]{32}$/);
    expect((await db.get(created.id)).n).toBe(7);
  });

  it("stores design docs by id, and refuses a view without map", async () => {
    const db = daemon.couch.use<Record<string, unknown>>("nano-docs");
    const ddoc = { views: { by_n: { map: "function (doc) { emit(doc.n, null); }" } } };
    const created = await db.insert(ddoc, "_design/items");
    expect(created.id).toBe("_design/items");
    expect(await db.get("_design/items")).toEqual({ _id: "_design/items", _rev: created.rev, ...ddoc });
    expect(await failure(db.insert({ views: { v: {} } }, "_design/bad"))).toMatchObject({
      statusCode: 400,
      error: "invalid_design_doc",
      reason: "View `v` must contain map function",
    });
  });
});

describe("bulk writes, _all_docs and _changes through nano", () => {
  const ids = ["b-1", "b-2", "b-3", "b-4"];

  beforeAll(async () => {
    await daemon.couch.db.create("nano-bulk");
  });

  it("writes in bulk, with per-doc results, and lists and fetches", async () => {
    const db = daemon.couch.use<Item>("nano-bulk");
    const written = await db.bulk({ docs: ids.map((id, n) => ({ _id: id, type: "item", n })) });
    expect(written.map((r) => r.id)).toEqual(ids);
    expect(written.every((r) => r.rev !== undefined)).toBe(true);
    const again = await db.bulk({ docs: [{ _id: "b-1", type: "item", n: 9 }, { _id: "b-5", type: "item", n: 5 }] });
    expect(again[0]).toEqual({ id: "b-1", error: "conflict", reason: "Document update conflict." });
    expect(again[1]).toMatchObject({ ok: true, id: "b-5" });

    const list = await db.list({ startkey: "b-2", limit: 2 });
    expect(list).toMatchObject({ total_rows: 5, offset: 1 });
    expect(list.rows.map((r) => r.id)).toEqual(["b-2", "b-3"]);
    const fetched = await db.fetch({ keys: ["b-4", "nope"] });
    expect(fetched.rows[0]).toMatchObject({ id: "b-4", doc: { n: 3 } });
    expect(fetched.rows[1]).toEqual({ key: "nope", error: "not_found" });
  });

  it("reads the changes feed, normal and longpoll", async () => {
    const db = daemon.couch.use<Item>("nano-bulk");
    const all = await db.changes({ include_docs: true });
    expect(all.results.map((r) => r.id).sort()).toEqual(["b-1", "b-2", "b-3", "b-4", "b-5"]);
    expect((all.results[0] as { doc?: unknown } | undefined)?.doc).toMatchObject({ type: "item" });
    // A longpoll from the current seq ends with the next write, whether it lands before or during the wait.
    const waiting = db.changes({ feed: "longpoll", since: all.last_seq, timeout: 30_000 });
    await db.insert({ type: "item", n: 6 }, "b-6");
    const next = await waiting;
    expect(next.results.map((r) => r.id)).toEqual(["b-6"]);
    expect(next.pending).toBe(0);
  });

  it("answers a normal feed with an ETag, and 304 while nothing changed", async () => {
    const first = await request(daemon, "GET", "/nano-bulk/_changes?limit=2");
    const etag = first.headers.get("etag") ?? "";
    expect(etag).toMatch(/^".+"$/);
    expect((await request(daemon, "GET", "/nano-bulk/_changes?limit=2", { headers: { "If-None-Match": etag } })).status).toBe(304);
    expect((await request(daemon, "GET", "/nano-bulk/_changes?limit=3", { headers: { "If-None-Match": etag } })).status).toBe(200);
  });

  it("follows the feed with nano's changesReader (POST longpoll)", async () => {
    const db = daemon.couch.use<Item>("nano-bulk");
    const seen: string[] = [];
    const reader = db.changesReader;
    const events = reader.start({ since: "now", timeout: 30_000 });
    // stop() aborts the open longpoll, which the reader reports as an error event.
    events.on("error", () => undefined);
    const ended = new Promise<void>((resolve) => events.on("end", () => resolve()));
    const sawBoth = new Promise<void>((resolve) => {
      events.on("change", (change: { id: string }) => {
        seen.push(change.id);
        if (seen.includes("r-2")) resolve();
      });
    });
    await db.insert({ type: "item", n: 11 }, "r-1");
    await db.insert({ type: "item", n: 12 }, "r-2");
    await sawBoth;
    reader.stop();
    await ended;
    expect(seen).toContain("r-2");
  });
});

describe("views through nano", () => {
  beforeAll(async () => {
    await daemon.couch.db.create("nano-views");
    const db = daemon.couch.use<Record<string, unknown>>("nano-views");
    await db.insert(
      { views: { by_n: { map: "function (doc) { emit(doc.n, doc.type); }" }, count: { map: "function (doc) { emit(doc.type, 1); }", reduce: "_count" } } },
      "_design/d",
    );
    await db.bulk({ docs: [1, 2, 3, 4].map((n) => ({ _id: `v-${n}`, type: n % 2 === 0 ? "even" : "odd", n })) });
  });

  it("queries a map view with JSON-encoded parameters, and keys (POST)", async () => {
    const db = daemon.couch.use("nano-views");
    const range = await db.view("d", "by_n", { startkey: 2, endkey: 3 });
    expect(range).toMatchObject({ total_rows: 4, offset: 1 });
    expect(range.rows).toEqual([
      { id: "v-2", key: 2, value: "even" },
      { id: "v-3", key: 3, value: "odd" },
    ]);
    const byKeys = await db.view("d", "by_n", { keys: [4, 1] });
    expect(byKeys.rows.map((r) => r.id)).toEqual(["v-4", "v-1"]);
  });

  it("queries a reduce view, grouped", async () => {
    const db = daemon.couch.use("nano-views");
    expect((await db.view("d", "count")).rows).toEqual([{ key: null, value: 4 }]);
    expect((await db.view("d", "count", { group: true })).rows).toEqual([
      { key: "even", value: 2 },
      { key: "odd", value: 2 },
    ]);
  });

  it("answers CouchDB's 404s for a missing design doc or view", async () => {
    const db = daemon.couch.use("nano-views");
    expect(await failure(db.view("nope", "v"))).toMatchObject({ statusCode: 404, reason: "missing" });
    expect(await failure(db.view("d", "nope"))).toMatchObject({ statusCode: 404, reason: "missing_named_view" });
  });
});

describe("nano without credentials", () => {
  it("gets CouchDB's 401s", async () => {
    const anonymous = nano(daemon.url);
    expect(await failure(anonymous.db.list())).toMatchObject({ statusCode: 401, reason: "You are not a server admin." });
    expect(await failure(anonymous.db.get("nano-views"))).toMatchObject({ statusCode: 401, reason: "You are not authorized to access this db." });
    const wrong = nano(daemon.url.replace("http://", "http://admin:wrong@"));
    expect(await failure(wrong.db.get("nano-views"))).toMatchObject({ statusCode: 401, reason: "Name or password is incorrect." });
  });
});
