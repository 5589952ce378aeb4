/**
 * The memory store's views (ViewStore) with the real sandbox: one shared
 * update per index, writes during an update, update=false|lazy, failing and
 * runaway map functions, garbage design docs, errors, deletion and close.
 *
 * The sandbox is the real one; a thin wrapper counts its calls and can hold
 * them back, so the tests can tell one shared update from several and make
 * a write land while an update runs (no timing involved).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from "../../../src/adapters/memory/index.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createSandboxFactory } from "../../../src/adapters/sandbox/index.js";
import type { IndexSandbox, SandboxFactory } from "../../../src/ports/sandbox.js";
import { viewQuery, ViewError, type ViewQuery } from "../../../src/ports/views.js";
import type { StoreEvent } from "../../../src/ports/events.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";

/** One sandbox thread for the whole file; each store's sandboxes are disposed by its close(). */
const realFactory = createSandboxFactory();
// The thread ends with its last sandbox: one kept open spares every test a thread start.
let keepAlive: IndexSandbox | undefined;
beforeAll(async () => {
  keepAlive = (await realFactory.compile([{ name: "keep", kind: "map", source: "function (doc) {}" }])).sandbox;
});
afterAll(() => keepAlive?.dispose());

interface Instrumented {
  readonly factory: SandboxFactory;
  readonly runs: () => number;
  /** Sandbox calls wait until the returned function is called. */
  hold(): () => void;
}

const instrumented = (): Instrumented => {
  let runs = 0;
  let gate: Promise<void> | undefined;
  const wrap = (sandbox: IndexSandbox): IndexSandbox => ({
    run: async (docs) => {
      runs++;
      if (gate !== undefined) await gate;
      return sandbox.run(docs);
    },
    dispose: () => sandbox.dispose(),
  });
  return {
    factory: {
      compile: async (functions, limits) => {
        const compiled = await realFactory.compile(functions, limits);
        return { errors: compiled.errors, sandbox: wrap(compiled.sandbox) };
      },
    },
    runs: () => runs,
    hold: () => {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
};

const stores: MemoryStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
});

const newStore = (options: Partial<MemoryStoreOptions> = {}): MemoryStore => {
  const store = createMemoryStore({ scheduler: new VirtualScheduler(), sandbox: realFactory, ...options });
  stores.push(store);
  return store;
};

const q = (given: Partial<ViewQuery> = {}): ViewQuery => viewQuery(given);
const keysOf = (rows: readonly { key: unknown }[]): unknown[] => rows.map((row) => row.key);
/** Lets promise callbacks run (no timers involved). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

const viewError = async (promise: Promise<unknown>): Promise<{ status: number; error: string; reason: string }> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ViewError) return { status: error.status, error: error.error, reason: error.reason };
    throw error;
  }
  throw new Error("expected a ViewError");
};

const BY_N = { views: { by_n: { map: "function (doc) { if (typeof doc.n === 'number') emit(doc.n, doc._id); }" } } };

const seed = (store: MemoryStore, count: number, db = "db"): void => {
  if (!store.dbExists(db)) store.createDb(db);
  store.writeDocs(db, Array.from({ length: count }, (_, n) => ({ _id: `doc-${n}`, n })));
};

describe("memory store views: one update at a time per index", () => {
  it("concurrent queries, updateViewGroup and buildViews share one update pass", async () => {
    const sandbox = instrumented();
    const store = newStore({ sandbox: sandbox.factory });
    seed(store, 10);
    store.putDesignDoc("db", "v", BY_N);
    const release = sandbox.hold();
    const callers = [
      store.queryView("db", "_design/v", "by_n", q()),
      store.queryView("db", "_design/v", "by_n", q({ limit: 2 })),
      store.updateViewGroup("db", "_design/v"),
      store.updateViewGroup("db", "_design/v"),
      store.buildViews("db"),
    ] as const;
    await settle();
    const info = await store.viewGroupInfo("db", "_design/v");
    expect(info.view_index).toMatchObject({ updater_running: true, waiting_clients: 5 });
    release();
    const [all, two, first, second, built] = await Promise.all(callers);
    expect(sandbox.runs()).toBe(1);
    expect(all.total_rows).toBe(10);
    expect(keysOf(two.rows)).toEqual([0, 1]);
    expect(first).toEqual(second);
    expect(built).toEqual(["_design/v"]);
    expect((await store.viewGroupInfo("db", "_design/v")).view_index).toMatchObject({ updater_running: false, waiting_clients: 0 });
  });

  it("a write landing during an update is picked up by one follow-up pass, shared by every later caller", async () => {
    const sandbox = instrumented();
    const store = newStore({ sandbox: sandbox.factory });
    seed(store, 3);
    store.putDesignDoc("db", "v", BY_N);
    const release = sandbox.hold();
    const before = store.updateViewGroup("db", "_design/v");
    await settle();
    store.writeDocs("db", [{ _id: "late", n: 99 }]);
    const seqWithLate = Number((await store.dbInfo("db"))!.updateSeq);
    const after = [store.updateViewGroup("db", "_design/v"), store.queryView("db", "_design/v", "by_n", q()), store.updateViewGroup("db", "_design/v")] as const;
    release();
    const first = await before;
    const [one, query, two] = await Promise.all(after);
    expect(first.indexSeq).toBeLessThan(seqWithLate);
    expect(one).toEqual({ indexSeq: seqWithLate });
    expect(two).toEqual(one);
    expect(keysOf(query.rows)).toEqual([0, 1, 2, 99]);
    // The first pass, and one follow-up for everyone who came later.
    expect(sandbox.runs()).toBe(2);
  });

  it("update=false answers from the index as it is, at once; update=lazy answers so, then updates", async () => {
    const sandbox = instrumented();
    const store = newStore({ sandbox: sandbox.factory });
    seed(store, 4);
    store.putDesignDoc("db", "v", BY_N);
    expect(await store.queryView("db", "_design/v", "by_n", q({ update: "false" }))).toEqual({ total_rows: 0, offset: 0, rows: [] });
    expect(sandbox.runs()).toBe(0);
    expect(await store.queryView("db", "_design/v", "by_n", q({ update: "lazy" }))).toEqual({ total_rows: 0, offset: 0, rows: [] });
    await store.updateViewGroup("db", "_design/v"); // joins the update the lazy query started
    expect(sandbox.runs()).toBe(1);
    expect((await store.queryView("db", "_design/v", "by_n", q({ update: "false", updateSeq: true }))).update_seq).toBe("5");
  });
});

describe("memory store views: what gets indexed", () => {
  it("updated docs lose their old rows, deleted docs leave, design docs are not mapped", async () => {
    const store = newStore();
    store.createDb("db");
    store.putDesignDoc("db", "v", { views: { all: { map: "function (doc) { emit(doc._id, doc.v); }" } } });
    const [a, b] = store.writeDocs("db", [{ _id: "a", v: 1 }, { _id: "b", v: 1 }, { _id: "c", v: 1 }]);
    await store.updateViewGroup("db", "_design/v");
    if (!a?.ok || !b?.ok) throw new Error("write failed");
    store.writeDocs("db", [{ _id: "a", _rev: a.rev, _deleted: true }, { _id: "b", _rev: b.rev, v: 2 }]);
    const result = await store.queryView("db", "_design/v", "all", q());
    expect(result.rows).toEqual([
      { id: "b", key: "b", value: 2 },
      { id: "c", key: "c", value: 1 },
    ]);
  });

  it("a map function gets the doc as CouchDB hands it: _id and _rev first, then the body as written (an empty body too)", async () => {
    const store = newStore();
    store.createDb("db");
    store.putDesignDoc("db", "v", { views: { shape: { map: "function (doc) { emit(doc._id, [Object.keys(doc), doc]); }" } } });
    const [full, empty] = store.writeDocs("db", [
      { z: 1, _id: "a", nested: { "quote\"d": ["\u2028", null] }, a: "é" },
      { _id: "b" },
    ]);
    if (!full?.ok || !empty?.ok) throw new Error("write failed");
    const result = await store.queryView("db", "_design/v", "shape", q());
    expect(result.rows).toEqual([
      { id: "a", key: "a", value: [["_id", "_rev", "z", "nested", "a"], { _id: "a", _rev: full.rev, z: 1, nested: { "quote\"d": ["\u2028", null] }, a: "é" }] },
      { id: "b", key: "b", value: [["_id", "_rev"], { _id: "b", _rev: empty.rev }] },
    ]);
  });

  it("a map that throws leaves that doc out of that view only, and says so in the log; log() lines are logged", async () => {
    const logger = createRecordingLogger();
    const store = newStore({ logger });
    seed(store, 4);
    store.putDesignDoc("db", "v", {
      views: {
        picky: { map: "function (doc) { if (doc.n === 2) throw new Error('boom on ' + doc._id); emit(doc.n, null); }" },
        chatty: { map: "function (doc) { log('saw ' + doc._id); emit(doc.n, null); }" },
      },
    });
    expect(keysOf((await store.queryView("db", "_design/v", "picky", q())).rows)).toEqual([0, 1, 3]);
    expect(keysOf((await store.queryView("db", "_design/v", "chatty", q())).rows)).toEqual([0, 1, 2, 3]);
    const failed = logger.find("a map function failed on a document");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.fields).toMatchObject({ db: "db", ddocs: ["_design/v"], views: ["picky"], docId: "doc-2", kind: "exception" });
    expect(String(failed[0]!.fields["error"])).toContain("boom on doc-2");
    expect(logger.find("map function log").map((line) => line.fields["line"])).toEqual(["saw doc-0", "saw doc-1", "saw doc-2", "saw doc-3"]);
  });

  it("a map that loops forever is stopped by the time limit and reported; its neighbours and other indexes are unharmed", async () => {
    const logger = createRecordingLogger();
    const store = newStore({ logger, sandboxLimits: { timeoutMsPerDoc: 50, timeoutMsPerBatch: 10_000 } });
    store.createDb("db");
    store.writeDocs("db", Array.from({ length: 8 }, (_, n) => ({ _id: `doc-${n}`, n, spin: n % 2 === 0 })));
    store.putDesignDoc("db", "v", {
      views: {
        spin: { map: "function (doc) { if (doc.spin) { while (true) {} } emit(doc.n, null); }" },
        calm: { map: "function (doc) { emit(doc.n, null); }" },
      },
    });
    store.putDesignDoc("db", "other", { views: { calm2: { map: "function (doc) { emit(doc._id, doc.n); }" } } });
    await store.updateViewGroup("db", "_design/v");
    expect(await viewError(store.queryView("db", "_design/v", "spin", q()))).toMatchObject({ status: 500, error: "map_function_stopped" });
    expect(keysOf((await store.queryView("db", "_design/v", "calm", q())).rows)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect((await store.queryView("db", "_design/other", "calm2", q())).total_rows).toBe(8);
    expect(logger.find("was stopped on a document").map((line) => line.fields["kind"])).toContain("timeout");
    expect(logger.find("no longer runs")).toHaveLength(1);
  });

  it("a map that allocates without bound is stopped by the memory limit; that doc is left out, the rest indexed", async () => {
    const logger = createRecordingLogger();
    const store = newStore({ logger, sandboxLimits: { memoryBytes: 8 * 1024 * 1024 } });
    store.createDb("db");
    store.writeDocs("db", [{ _id: "a", n: 1 }, { _id: "hog", n: 2, hog: true }, { _id: "c", n: 3 }]);
    store.putDesignDoc("db", "v", { views: { v: { map: "function (doc) { if (doc.hog) { var a = []; while (true) a.push(new ArrayBuffer(1 << 20)); } emit(doc.n, null); }" } } });
    expect(keysOf((await store.queryView("db", "_design/v", "v", q())).rows)).toEqual([1, 3]);
    expect(logger.find("was stopped on a document")[0]?.fields).toMatchObject({ docId: "hog", kind: "memory" });
  });

  it("garbage in a design doc never throws: bad views are left out, the good ones work", async () => {
    const logger = createRecordingLogger();
    const store = newStore({ logger });
    seed(store, 2);
    store.putDesignDoc("db", "garbage", { views: "not an object" });
    store.putDesignDoc("db", "mixed", { views: { good: { map: "function (doc) { emit(doc.n); }" }, number: 42, nomap: { reduce: "_sum" }, nonstring: { map: 5 }, broken: { map: "function (doc) { emit( }" } } });
    expect(await store.viewIndexInfo("db", "_design/garbage")).toBeUndefined();
    expect(await viewError(store.queryView("db", "_design/garbage", "x", q()))).toEqual({ status: 404, error: "not_found", reason: "missing_named_view" });
    expect(keysOf((await store.queryView("db", "_design/mixed", "good", q())).rows)).toEqual([0, 1]);
    for (const view of ["number", "nomap", "nonstring"]) expect((await viewError(store.queryView("db", "_design/mixed", view, q()))).reason).toBe("missing_named_view");
    const broken = await viewError(store.queryView("db", "_design/mixed", "broken", q()));
    expect(broken).toMatchObject({ status: 500, error: "map_function_stopped" });
    expect(broken.reason).toContain("compilation_error");
    expect(logger.find("no longer runs")).toHaveLength(1);
  });
});

describe("memory store views: rows that cannot be indexed", () => {
  it("a key nested deeper than the index takes leaves that doc out, logged; the others are indexed", async () => {
    const logger = createRecordingLogger();
    const store = newStore({ logger });
    seed(store, 3);
    store.putDesignDoc("db", "v", { views: { deep: { map: "function (doc) { var k = doc.n; if (doc.n === 1) { for (var i = 0; i < 600; i++) k = [k]; } emit(k, null); }" } } });
    expect(keysOf((await store.queryView("db", "_design/v", "deep", q())).rows)).toEqual([0, 2]);
    expect(String(logger.find("a map function failed on a document")[0]?.fields["error"])).toContain("nested more than 500 levels");
  });
});

describe("memory store views: errors", () => {
  it("says what is missing as CouchDB does", async () => {
    const store = newStore();
    seed(store, 1);
    store.putDesignDoc("db", "v", { views: { js: { map: "function (doc) { emit(doc.n, 1); }", reduce: "function (k, v) { return sum(v); }" } } });
    const gone = store.putDesignDoc("db", "gone", BY_N);
    if (gone.ok) store.deleteDoc("db", "_design/gone", gone.rev);
    expect(await viewError(store.queryView("nodb", "_design/v", "js", q()))).toEqual({ status: 404, error: "not_found", reason: "Database does not exist." });
    expect(await viewError(store.queryView("db", "_design/nope", "js", q()))).toEqual({ status: 404, error: "not_found", reason: "missing" });
    expect(await viewError(store.queryView("db", "_design/gone", "by_n", q()))).toEqual({ status: 404, error: "not_found", reason: "deleted" });
    expect(await viewError(store.queryView("db", "_design/v", "nope", q()))).toEqual({ status: 404, error: "not_found", reason: "missing_named_view" });
    expect(await viewError(store.queryView("db", "_design/v", "js", q({ group: true, reduce: false })))).toMatchObject({ status: 400, error: "query_parse_error" });
    expect(await viewError(store.queryView("db", "_design/v", "js", q()))).toMatchObject({ status: 500, error: "unsupported_reduce" });
    expect((await store.queryView("db", "_design/v", "js", q({ reduce: false }))).rows).toEqual([{ id: "doc-0", key: 0, value: 1 }]);
    expect(await viewError(store.viewGroupInfo("db", "_design/nope"))).toMatchObject({ status: 404, reason: "missing" });
    store.setAvailable(false);
    await expect(store.queryView("db", "_design/v", "js", q())).rejects.toThrow(/unavailable/);
  });

  it("a db deleted during an update: the update fails with 404, the db made again under that name works", async () => {
    const sandbox = instrumented();
    const store = newStore({ sandbox: sandbox.factory });
    seed(store, 3);
    store.putDesignDoc("db", "v", BY_N);
    const release = sandbox.hold();
    const update = store.updateViewGroup("db", "_design/v");
    await settle();
    store.deleteDb("db");
    release();
    expect(await viewError(update)).toEqual({ status: 404, error: "not_found", reason: "Database does not exist." });
    seed(store, 2);
    store.putDesignDoc("db", "v", BY_N);
    expect((await store.queryView("db", "_design/v", "by_n", q())).total_rows).toBe(2);
  });

  it("close() disposes the store's own sandbox; later updates fail, queries of what was built still answer", async () => {
    const store = createMemoryStore({ scheduler: new VirtualScheduler() });
    seed(store, 2);
    store.putDesignDoc("db", "v", BY_N);
    await store.updateViewGroup("db", "_design/v");
    store.close();
    store.writeDocs("db", [{ _id: "more", n: 7 }]);
    expect(await viewError(store.updateViewGroup("db", "_design/v"))).toMatchObject({ status: 500, error: "index_update_failed" });
    expect((await store.queryView("db", "_design/v", "by_n", q({ update: "false" }))).total_rows).toBe(2);
  });
});

describe("memory store views: events and files", () => {
  it("view-updated goes to every design doc using the index when it grew, and not when nothing changed", async () => {
    const store = newStore();
    const events: StoreEvent[] = [];
    await store.start((event) => events.push(event));
    seed(store, 2);
    store.putDesignDoc("db", "one", BY_N);
    store.putDesignDoc("db", "two", BY_N);
    await store.updateViewGroup("db", "_design/one");
    const updates = () => events.filter((e) => e.type === "view-updated");
    expect(updates()).toEqual([
      { type: "view-updated", db: "db", ddoc: "_design/one" },
      { type: "view-updated", db: "db", ddoc: "_design/two" },
    ]);
    store.writeDocs("db", [{ _id: "no-n" }]);
    await store.buildViews("db");
    expect(updates()).toHaveLength(2);
  });

  it("include_docs loads the row's doc, or the doc a value {_id, _rev} names (null when gone or at another rev)", async () => {
    const store = newStore();
    store.createDb("db");
    const [target] = store.writeDocs("db", [{ _id: "t", x: 1 }]);
    if (!target?.ok) throw new Error("write failed");
    store.writeDocs("db", [
      { _id: "l1", link: "t" },
      { _id: "l2", link: "t", rev: target.rev },
      { _id: "l3", link: "t", rev: "1-0" },
      { _id: "l4", link: "nope" },
    ]);
    store.putDesignDoc("db", "v", { views: { links: { map: "function (doc) { if (doc.link) emit(doc._id, doc.rev ? { _id: doc.link, _rev: doc.rev } : { _id: doc.link }); }" } } });
    const rows = (await store.queryView("db", "_design/v", "links", q({ includeDocs: true }))).rows;
    expect(rows.map((row) => row.doc)).toEqual([{ _id: "t", _rev: target.rev, x: 1 }, { _id: "t", _rev: target.rev, x: 1 }, null, null]);
  });
});
