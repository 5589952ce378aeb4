/**
 * `DbListing` over HTTP (the db updates feed's reconciliation): `_all_dbs`
 * pages with `startkey`/`limit`, update seqs 100 names per `POST /_dbs_info`.
 * Over a loopback replay server (request building, a server that ignores
 * paging), the real PouchDB Server (no `_dbs_info`), and a real CouchDB when
 * COUCHDB_URL is set.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createCouchStore, type CouchStoreHandle } from "../../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import { compareDbNames } from "../../../src/core/db-updates/index.js";
import type { DbListing } from "../../../src/ports/store.js";
import { startPouchDbServer, type PouchDbServer } from "../../support/pouchdb-server.js";
import { ReplayServer } from "../../support/replay-server.js";
import { couchRequest, liveCouchUrl } from "../../support/live-couch.js";

/** Every db through `listDbsAfter`, page by page. */
const walk = async (listing: DbListing, limit: number): Promise<string[]> => {
  const all: string[] = [];
  for (let after: string | undefined; ; ) {
    const page = await listing.listDbsAfter(after, limit);
    all.push(...page);
    if (page.length < limit) return all;
    after = page[page.length - 1];
  }
};

describe("DbListing over a replay server", () => {
  let server: ReplayServer;
  let base: string;
  let handle: CouchStoreHandle;
  const names = ["_global_changes", "_replicator", "_users", "a", "b", "c/d", "c_e", "d"];
  beforeEach(async () => {
    server = new ReplayServer();
    base = await server.start();
    handle = createCouchStore({ url: base, logger: createRecordingLogger(), state: createMemoryStatePort() });
  });
  afterEach(async () => {
    await handle.close();
    await server.stop();
  });

  /** `_all_dbs` as CouchDB answers it: `startkey` inclusive, then `limit`. */
  const couchAllDbs = (path: string) => {
    const q = new URL(`http://x${path}`).searchParams;
    const start = q.get("startkey") === null ? undefined : (JSON.parse(q.get("startkey") ?? "") as string);
    const limit = q.get("limit") === null ? Infinity : Number(q.get("limit"));
    return { status: 200, body: names.filter((n) => start === undefined || compareDbNames(n, start) >= 0).slice(0, limit) };
  };

  it("pages with startkey (inclusive, so one more) and limit; `after` itself and _global_changes are left out", async () => {
    server.route("GET", (p) => p.startsWith("/_all_dbs"), (req) => couchAllDbs(req.path));
    expect(await handle.store.listDbsAfter(undefined, 2)).toEqual(["_replicator", "_users"]);
    expect(await handle.store.listDbsAfter("_users", 2)).toEqual(["a", "b"]);
    const q = new URL(`http://x${server.requests[1]?.path ?? ""}`).searchParams;
    expect([q.get("startkey"), q.get("limit")]).toEqual(['"_users"', "4"]);
    expect(await walk(handle.store, 3)).toEqual(["_replicator", "_users", "a", "b", "c/d", "c_e", "d"]);
  });

  it("a server that ignores startkey/limit is detected and cut client-side (a short page would read as deletions)", async () => {
    server.route("GET", (p) => p.startsWith("/_all_dbs"), { status: 200, body: names });
    expect(await handle.store.listDbsAfter("b", 2)).toEqual(["c/d", "c_e"]);
    expect(handle.status().capabilities.allDbsPaging).toBe(false);
    expect(await walk(handle.store, 2)).toEqual(["_replicator", "_users", "a", "b", "c/d", "c_e", "d"]);
  });

  it("update seqs: 100 names per POST /_dbs_info; missing dbs absent", async () => {
    const keysSeen: number[] = [];
    server.route("POST", "/_dbs_info", (req) => {
      const keys = (JSON.parse(req.body) as { keys: string[] }).keys;
      keysSeen.push(keys.length);
      return { status: 200, body: keys.map((k) => (k.endsWith("9") ? { key: k, error: "not_found" } : { key: k, info: { db_name: k, update_seq: `${k.length}-g1AAA`, sizes: { file: 1, active: 1 } } })) };
    });
    const dbs = Array.from({ length: 250 }, (_, i) => `db${i}`);
    const seqs = await handle.store.dbUpdateSeqs(dbs);
    expect(keysSeen).toEqual([100, 100, 50]);
    expect(seqs.size).toBe(225);
    expect(seqs.get("db10")).toBe("4-g1AAA");
    expect(seqs.has("db9")).toBe(false);
  });
});

describe("DbListing on the real PouchDB Server (no _dbs_info)", () => {
  let pouch: PouchDbServer;
  let handle: CouchStoreHandle;
  beforeAll(async () => {
    pouch = await startPouchDbServer();
    handle = createCouchStore({ url: pouch.url, logger: createRecordingLogger(), state: createMemoryStatePort() });
  });
  afterAll(async () => {
    await handle?.close();
    await pouch?.stop();
  });

  it("pages through every db and reads their seqs one GET at a time", async () => {
    const created = ["p-a", "p-b", "p-c", "p-d", "p-e"];
    for (const db of created) await handle.store.ensureDb(db);
    await handle.store.bulkDocs("p-c", [{ _id: "x" }]);
    const all = await walk(handle.store, 2);
    expect(all.filter((db) => db.startsWith("p-"))).toEqual(created);
    const seqs = await handle.store.dbUpdateSeqs([...created, "p-missing"]);
    expect([...seqs.keys()].sort()).toEqual(created);
    expect(seqs.get("p-c")).not.toBe(seqs.get("p-a"));
  });
});

const couch = (method: string, path: string): Promise<unknown> => couchRequest(method, path);

describe.skipIf(liveCouchUrl === undefined)("DbListing on a real CouchDB (COUCHDB_URL)", () => {
  it("pages through _all_dbs exactly as it lists them, without _global_changes", async () => {
    const handle = createCouchStore({ url: liveCouchUrl ?? "", logger: createRecordingLogger(), state: createMemoryStatePort() });
    const prefix = `listing-${Date.now().toString(36)}-`;
    const created = ["a", "b(1)", "b/c", "b_d", "c$"].map((n) => `${prefix}${n}`);
    try {
      for (const db of created) await handle.store.ensureDb(db);
      const allDbs = ((await couch("GET", "/_all_dbs")) as string[]).filter((db) => db !== "_global_changes");
      expect(await walk(handle.store, 2)).toEqual(allDbs);
      const seqs = await handle.store.dbUpdateSeqs(created);
      expect([...seqs.keys()].sort()).toEqual([...created].sort());
    } finally {
      for (const db of created) await couch("DELETE", `/${encodeURIComponent(db)}`);
      await handle.close();
    }
  });
});
