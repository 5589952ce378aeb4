/**
 * The CouchDB index backends against a loopback server that answers as
 * CouchDB 3.4.3 does (bodies shaped like fixtures 45, 56, 57, 59, 61 of
 * test/fixtures/couchdb-3.4.3): a view build is triggered once with
 * `update=lazy`, not at all when the updater already runs, and followed
 * through `_info`; PouchDB Server's "Not implemented." `_info` means a
 * blocking build; search and nouveau are used only where `GET /` lists them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createCouchIndexBackends } from "../../../src/adapters/couchdb-http/indexing/index.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import type { IndexBackend } from "../../../src/ports/index-backend.js";

interface FakeCouch {
  features: string[];
  dbSeq: number;
  indexSeq: number;
  updating: boolean;
  /** `_info` polls an update takes before it reaches the db's seq. */
  pollsPerBuild: number;
  pouch: boolean;
  requests: string[];
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
});

async function fakeCouch(couch: FakeCouch): Promise<string> {
  let pollsLeft = 0;
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify(body));
  };
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    couch.requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (url.pathname === "/") return send(res, 200, { couchdb: "Welcome", version: "3.4.3", features: couch.features });
    if (url.pathname.endsWith("/_info")) {
      if (couch.pouch) return send(res, 200, { name: "d", view_index: "Not implemented." });
      if (couch.updating && --pollsLeft <= 0) {
        couch.updating = false;
        couch.indexSeq = couch.dbSeq;
      }
      const pending = couch.dbSeq - couch.indexSeq;
      return send(res, 200, {
        name: "d",
        view_index: { updates_pending: { minimum: pending, preferred: pending, total: pending }, waiting_commit: false, waiting_clients: 0, updater_running: couch.updating, update_seq: couch.indexSeq, sizes: { file: 1, external: 1, active: 1 }, signature: "s", purge_seq: 0, language: "javascript", compact_running: false, collator_versions: ["153.120"] },
      });
    }
    if (url.pathname.includes("/_view/")) {
      if (couch.pouch) {
        couch.indexSeq = couch.dbSeq;
        return send(res, 200, { total_rows: 3, offset: 0, rows: [], update_seq: couch.dbSeq });
      }
      if (url.searchParams.get("update") === "lazy" && !couch.updating && couch.indexSeq < couch.dbSeq) {
        couch.updating = true;
        pollsLeft = couch.pollsPerBuild;
      }
      return send(res, 200, { rows: [] });
    }
    if (url.pathname.includes("/_search/")) {
      if (!couch.features.includes("search")) return send(res, 503, { error: "service unavailable", reason: "Search is not available" });
      couch.indexSeq = couch.dbSeq;
      return send(res, 200, { total_rows: 0, bookmark: "x", rows: [] });
    }
    if (url.pathname.includes("/_search_info/")) return send(res, 200, { name: "_design/d/t", search_index: { pending_seq: couch.indexSeq, committed_seq: couch.indexSeq, doc_count: 1, doc_del_count: 0, disk_size: 10 } });
    if (url.pathname.endsWith("_cleanup")) return send(res, 202, { ok: true });
    return send(res, 404, { error: "not_found", reason: "missing" });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

const couch = (overrides: Partial<FakeCouch> = {}): FakeCouch => ({ features: [], dbSeq: 120, indexSeq: 0, updating: false, pollsPerBuild: 3, pouch: false, requests: [], ...overrides });

const DDOCS = [{ id: "_design/d", body: { views: { v: { map: "function (doc) { emit(doc.n); }" } }, indexes: { t: { index: "function (doc) { index('t', doc.t); }" } } } }];

async function backends(url: string) {
  const logger = createRecordingLogger();
  const made = createCouchIndexBackends({ url, logger, poll: { minMs: 1, maxMs: 4 } });
  const byType = (type: string): IndexBackend => made.backends.find((b) => b.type === type)!;
  for (const backend of made.backends) await backend.start?.();
  return { made, byType, logger };
}

const signal = new AbortController().signal;

describe("CouchDB index backends", () => {
  it("views: one lazy trigger, then _info until the index reaches the target; the db seq comes with it", async () => {
    const state = couch();
    const { byType, made } = await backends(await fakeCouch(state));
    const views = byType("views");
    const [spec] = views.indexesOf("db", DDOCS).indexes;
    const progress: number[] = [];
    const result = await views.build("db", spec!, { targetSeq: 120, signal, onProgress: (seq) => progress.push(seq) });
    expect(result).toEqual({ indexSeq: 120, dbSeq: 120 });
    expect(state.requests.filter((r) => r.includes("update=lazy"))).toEqual(["GET /db/_design/d/_view/v?update=lazy&limit=0"]);
    expect(progress).toEqual([0, 120]);
    await made.close();
  });

  it("views: an index already updating (a query, CouchDB's own ken) is followed, never triggered again", async () => {
    const state = couch({ updating: true });
    const { byType, made } = await backends(await fakeCouch(state));
    const views = byType("views");
    const [spec] = views.indexesOf("db", DDOCS).indexes;
    // The fake finishes a running update after `pollsPerBuild` polls.
    await views.build("db", spec!, { targetSeq: 120, signal });
    expect(state.requests.some((r) => r.includes("_view/"))).toBe(false);
    expect(await views.progress("db", spec!)).toEqual({ indexSeq: 120, updating: false, waitingClients: 0 });
    await made.close();
  });

  it("views on PouchDB Server (`_info`: Not implemented.): a blocking query, progress unknown", async () => {
    const state = couch({ pouch: true });
    const { byType, made } = await backends(await fakeCouch(state));
    const views = byType("views");
    const [spec] = views.indexesOf("db", DDOCS).indexes;
    expect(await views.build("db", spec!, { targetSeq: 100, signal })).toEqual({ indexSeq: 120 });
    expect(state.requests).toContain("GET /db/_design/d/_view/v?limit=0&update_seq=true");
    expect(await views.progress("db", spec!)).toBeUndefined();
    await made.close();
  });

  it("search where the server has none (3.4.3): one log line, no index, no request", async () => {
    const state = couch();
    const { byType, logger, made } = await backends(await fakeCouch(state));
    expect(byType("search").indexesOf("db", DDOCS).indexes).toEqual([]);
    expect(byType("nouveau").indexesOf("db", [{ id: "_design/n", body: { nouveau: { x: { index: "function () {}" } } } }]).indexes).toEqual([]);
    await byType("search").cleanup("db", DDOCS);
    expect(state.requests.filter((r) => r.includes("_search"))).toEqual([]);
    expect(logger.text().split("\n").filter((l) => l.includes("is not available on this server"))).toHaveLength(2);
    await made.close();
  });

  it("search where the server lists it: built by a query, progress from _search_info", async () => {
    const state = couch({ features: ["search"] });
    const { byType, made } = await backends(await fakeCouch(state));
    const search = byType("search");
    const [spec] = search.indexesOf("db", DDOCS).indexes;
    expect(spec).toMatchObject({ type: "search", name: "_design/d/t", entry: "t", field: "indexes" });
    expect(await search.build("db", spec!, { targetSeq: 120, signal })).toEqual({ indexSeq: 120 });
    expect(state.requests).toContain("GET /db/_design/d/_search/t?q=*%3A*&limit=1");
    expect(await search.progress("db", spec!)).toEqual({ indexSeq: 120, updating: false });
    await search.cleanup("db", DDOCS);
    expect(state.requests).toContain("POST /db/_search_cleanup");
    await made.close();
  });
});
