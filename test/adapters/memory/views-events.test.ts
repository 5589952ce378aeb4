/** View index files (real rows, sized by the storage model), view compaction and cleanup, events, and the availability switch. */
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore, StoreUnavailableError, type MemoryStore } from "../../../src/adapters/memory/index.js";
import { viewRowActiveBytes } from "../../../src/adapters/memory/storage-model.js";
import type { StoreEvent } from "../../../src/ports/events.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";

// Each row changes with the round, so every round rewrites it (rows emitted again unchanged are not rewritten).
const VIEWS_A = { views: { by_n: { map: "function (doc) { emit(doc.n, doc.round); }" } } };
const VIEWS_B = { views: { by_n: { map: "function (doc) { emit(doc.n, 1); }" }, all: { map: "function (doc) { emit(null); }" } } };

const stores: MemoryStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
});

/** Files without compression, so a row's live bytes follow from its JSON size alone (views-compression.test.ts covers compression). */
function world(autoIndexDelayMs: number | false = false): { scheduler: VirtualScheduler; store: MemoryStore } {
  const scheduler = new VirtualScheduler();
  const store = createMemoryStore({ scheduler, autoIndexDelayMs, model: { fileCompression: "none" } });
  stores.push(store);
  return { scheduler, store };
}

/** `revs` carries the current revs between calls (a fresh map means creating the docs). */
function writeRounds(store: MemoryStore, db: string, docs: number, rounds: number, revs = new Map<string, string>()): void {
  for (let round = 0; round < rounds; round++) {
    const results = store.writeDocs(db, Array.from({ length: docs }, (_, i) => ({ _id: `d${i}`, _rev: revs.get(`d${i}`), n: i, round })));
    for (const r of results) if (r.ok) revs.set(r.id, r.rev);
  }
}

/** Live bytes of docs d0..d(n-1) in VIEWS_A (key n, a one-digit round, id `d<n>`): the JSON of each row, sized by the model. */
const viewABytes = (store: MemoryStore, docs: number): number =>
  Array.from({ length: docs }, (_, i) => viewRowActiveBytes(store.model, String(i).length + 1 + `d${i}`.length, 1)).reduce((a, b) => a + b, 0);

describe("memory store: view indexes", () => {
  it("sizes grow with builds, garbage accumulates, compaction shrinks the file to ~active", async () => {
    const { scheduler, store } = world();
    store.createDb("db");
    store.putDesignDoc("db", "v", VIEWS_A);
    const empty = await store.viewIndexInfo("db", "_design/v");
    expect(empty).toMatchObject({ activeBytes: 0, updateSeqNumber: 0, compactionRunning: false, needsUpgrade: false });
    expect(empty?.signature).toMatch(/^[0-9a-f]{32}$/);
    const revs = new Map<string, string>();
    writeRounds(store, "db", 1000, 1, revs);
    expect(await store.buildViews("db")).toEqual(["_design/v"]);
    const built = await store.viewIndexInfo("db", "_design/v");
    expect(built?.activeBytes).toBe(viewABytes(store, 1000));
    expect(built?.updateSeqNumber).toBe((await store.dbInfo("db"))?.updateSeqNumber);
    expect(await store.buildViews("db")).toEqual([]);
    writeRounds(store, "db", 1000, 3, revs);
    expect(await store.buildViews("db")).toEqual(["_design/v"]);
    const grown = await store.viewIndexInfo("db", "_design/v");
    if (built === undefined || grown === undefined) throw new Error("no index");
    expect(grown.activeBytes).toBe(built.activeBytes);
    expect(grown.fileBytes).toBeGreaterThan(built.fileBytes);
    const handle = await store.startJob({ kind: "view", db: "db", ddoc: "_design/v" });
    expect((await store.viewIndexInfo("db", "_design/v"))?.compactionRunning).toBe(true);
    scheduler.runUntilIdle();
    const outcome = await handle.done;
    const compacted = await store.viewIndexInfo("db", "_design/v");
    expect(outcome).toEqual({ ok: true, reclaimedBytes: grown.fileBytes - (compacted?.fileBytes ?? 0) });
    expect(compacted?.fileBytes).toBeLessThanOrEqual(store.model.viewHeaderBytes + Math.ceil(grown.activeBytes * (1 + store.model.compactedOverheadRatio)));
  });

  it("the signature follows the views; same views share one index; cleanup removes the unused files", async () => {
    const { scheduler, store } = world();
    store.createDb("db");
    const first = store.putDesignDoc("db", "v", VIEWS_A);
    store.putDesignDoc("db", "twin", VIEWS_A);
    writeRounds(store, "db", 100, 1);
    await store.buildViews("db");
    const a = await store.viewIndexInfo("db", "_design/v");
    expect((await store.viewIndexInfo("db", "_design/twin"))?.signature).toBe(a?.signature);
    if (!first.ok) throw new Error("put failed");
    store.putDesignDoc("db", "v", VIEWS_B, first.rev);
    const b = await store.viewIndexInfo("db", "_design/v");
    expect(b?.signature).not.toBe(a?.signature);
    // The old signature is still used by the twin: nothing to clean yet.
    let handle = await store.startJob({ kind: "cleanup", db: "db" });
    scheduler.runUntilIdle();
    expect(await handle.done).toEqual({ ok: true, reclaimedBytes: 0 });
    const twin = await store.viewIndexInfo("db", "_design/twin");
    const twinRev = (await store.designDocs("db")).find((d) => d.id === "_design/twin")?.rev ?? "";
    store.deleteDoc("db", "_design/twin", twinRev);
    expect(await store.viewIndexInfo("db", "_design/twin")).toBeUndefined();
    const filesBefore = store.totals().viewFileBytes;
    handle = await store.startJob({ kind: "cleanup", db: "db" });
    scheduler.runUntilIdle();
    expect(await handle.done).toEqual({ ok: true, reclaimedBytes: twin?.fileBytes });
    expect(store.totals().viewFileBytes).toBe(filesBefore - (twin?.fileBytes ?? 0));
    await expect(store.startJob({ kind: "view", db: "db", ddoc: "_design/twin" })).rejects.toThrow(/not_found/);
  });

  it("auto-indexing (when switched on) builds on the scheduler after writes and emits view-updated", async () => {
    const { scheduler, store } = world(1000);
    const events: StoreEvent[] = [];
    await store.start((event) => events.push(event));
    store.createDb("db");
    store.putDesignDoc("db", "v", VIEWS_A);
    writeRounds(store, "db", 10, 2);
    expect(events.filter((e) => e.type === "view-updated")).toEqual([]);
    scheduler.advanceBy(1000);
    // The timer started the build; asking for the same index joins it instead of starting another.
    expect((await store.viewIndexInfo("db", "_design/v"))?.updaterRunning).toBe(true);
    await store.updateViewGroup("db", "_design/v");
    expect(events.filter((e) => e.type === "view-updated")).toEqual([{ type: "view-updated", db: "db", ddoc: "_design/v" }]);
    expect((await store.viewIndexInfo("db", "_design/v"))?.activeBytes).toBe(viewABytes(store, 10));
  });

  it("auto-indexing: dbs written at the same time share one timer; a db deleted and created again is built at its own time", async () => {
    const { scheduler, store } = world(1000);
    const built: string[] = [];
    await store.start((event) => {
      if (event.type === "view-updated") built.push(event.db);
    });
    for (const db of ["a", "b", "c"]) {
      store.createDb(db);
      store.putDesignDoc(db, "v", VIEWS_A);
      writeRounds(store, db, 5, 1);
    }
    expect(scheduler.pendingTimers()).toBe(1);
    store.deleteDb("b");
    scheduler.advanceBy(500);
    store.createDb("b");
    store.putDesignDoc("b", "v", VIEWS_A);
    writeRounds(store, "b", 5, 1);
    expect(scheduler.pendingTimers()).toBe(2);
    scheduler.advanceBy(500);
    // The timer started a's and c's builds (asking joins them; the sandbox thread takes real time), not b's.
    expect((await store.viewIndexInfo("b", "_design/v"))?.updaterRunning).toBe(false);
    await Promise.all(["a", "c"].map((db) => store.updateViewGroup(db, "_design/v")));
    expect([...built].sort()).toEqual(["a", "c"]);
    expect((await store.viewIndexInfo("b", "_design/v"))?.updateSeqNumber).toBe(0);
    scheduler.advanceBy(500);
    await store.updateViewGroup("b", "_design/v");
    expect(built).toHaveLength(3);
    expect(built[2]).toBe("b");
    expect(scheduler.pendingTimers()).toBe(0);
  });

  it("auto-indexing is off by default: writes alone build nothing", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler });
    stores.push(store);
    store.createDb("db");
    store.putDesignDoc("db", "v", VIEWS_A);
    writeRounds(store, "db", 10, 1);
    scheduler.advanceBy(60_000);
    expect((await store.viewIndexInfo("db", "_design/v"))?.updateSeqNumber).toBe(0);
  });

  it("needsUpgrade is reported until a view compaction", async () => {
    const { scheduler, store } = world();
    store.createDb("db");
    store.putDesignDoc("db", "v", VIEWS_A);
    expect(store.setViewNeedsUpgrade("db", "_design/v")).toBe(true);
    expect((await store.viewIndexInfo("db", "_design/v"))?.needsUpgrade).toBe(true);
    const handle = await store.startJob({ kind: "view", db: "db", ddoc: "_design/v" });
    scheduler.runUntilIdle();
    await handle.done;
    expect((await store.viewIndexInfo("db", "_design/v"))?.needsUpgrade).toBe(false);
  });
});

describe("memory store: events", () => {
  it("emits db-created/updated/deleted and ddoc-updated to every started source", async () => {
    const { store } = world();
    const a: StoreEvent[] = [];
    const b: StoreEvent[] = [];
    const sourceA = store.createEventSource();
    const sourceB = store.createEventSource();
    await sourceA.start((e) => a.push(e));
    await sourceB.start((e) => b.push(e));
    store.createDb("db");
    store.writeDocs("db", [{ _id: "x" }, { _id: "_design/d", views: {} }]);
    store.deleteDb("db");
    const expected: StoreEvent[] = [
      { type: "db-created", db: "db" },
      { type: "db-updated", db: "db" },
      { type: "ddoc-updated", db: "db", ddoc: "_design/d" },
      { type: "db-deleted", db: "db" },
    ];
    expect(a).toEqual(expected);
    expect(b).toEqual(expected);
    await sourceA.stop();
    store.createDb("db2");
    expect(a).toHaveLength(4);
    expect(b).toHaveLength(5);
    expect(sourceB.status()).toEqual({ mode: "push", connected: true });
  });

  it("a named source resumes after a restart: what happened while stopped is replayed, once", async () => {
    const { store } = world();
    const seen: StoreEvent[] = [];
    const first = store.createEventSource({ name: "daemon" });
    await first.start((e) => seen.push(e));
    store.createDb("db");
    await first.stop();
    store.writeDocs("db", [{ _id: "while-stopped" }]);
    const second = store.createEventSource({ name: "daemon" });
    await second.start((e) => seen.push(e));
    store.deleteDb("db");
    expect(seen).toEqual([
      { type: "db-created", db: "db" },
      { type: "db-updated", db: "db" },
      { type: "db-deleted", db: "db" },
    ]);
  });

  it("a named source whose position fell off the bounded log resyncs with an update per existing db, then says events were missed", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    const source = store.createEventSource({ name: "late" });
    await source.start(() => undefined);
    await source.stop();
    store.createDb("keep");
    for (let i = 0; i < 100_001; i++) store.writeDocs("keep", [{ _id: `d${i}` }]);
    const seen: StoreEvent[] = [];
    await store.createEventSource({ name: "late" }).start((e) => seen.push(e));
    expect(seen).toEqual([
      { type: "db-updated", db: "keep" },
      { type: "source-resumed", reason: "the replay log no longer reaches back to where this source stopped" },
    ]);
  });

  it("a throwing listener neither fails the write nor starves other listeners", async () => {
    const errors: unknown[] = [];
    const store = createMemoryStore({ scheduler: new VirtualScheduler(), autoIndexDelayMs: false, onListenerError: (e) => errors.push(e) });
    const seen: StoreEvent[] = [];
    await store.createEventSource().start(() => {
      throw new Error("boom");
    });
    await store.createEventSource().start((e) => seen.push(e));
    expect(store.createDb("db")).toEqual({ ok: true });
    expect(seen).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });

  it("no event for a write that changed nothing (all conflicts)", async () => {
    const { store } = world();
    store.createDb("db");
    store.putDoc("db", { _id: "x" });
    const seen: StoreEvent[] = [];
    await store.start((e) => seen.push(e));
    store.putDoc("db", { _id: "x" });
    expect(seen).toEqual([]);
  });
});

describe("memory store: availability switch", () => {
  it("every port method rejects while unavailable; data and held events survive", async () => {
    const { store } = world();
    store.createDb("db");
    store.putDoc("db", { _id: "x", v: 1 });
    const seen: StoreEvent[] = [];
    await store.start((e) => seen.push(e));
    store.setAvailable(false);
    const calls: Promise<unknown>[] = [
      store.listDbs(),
      store.dbInfo("db"),
      store.dbInfos(["db"]),
      store.designDocs("db"),
      store.viewIndexInfo("db", "_design/x"),
      store.startJob({ kind: "db", db: "db" }),
      store.attachJob({ kind: "db", db: "db" }),
      store.ensureDb("db"),
      store.getDoc("db", "x"),
      store.bulkDocs("db", []),
      store.changes("db", {}),
      store.currentSeq("db"),
    ];
    for (const call of calls) await expect(call).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(store.status().connected).toBe(false);
    // Clients of the database keep writing; upholster hears about it when it is back.
    store.putDoc("db", { _id: "y" });
    store.putDoc("db", { _id: "z" });
    expect(seen).toEqual([]);
    store.setAvailable(true);
    expect(seen).toEqual([{ type: "db-updated", db: "db" }]);
    expect(await store.getDoc("db", "x")).toMatchObject({ v: 1 });
    expect(store.status().connected).toBe(true);
  });

  it("held events are bounded; the oldest are dropped first, and the loss is announced (source-resumed)", async () => {
    const store = createMemoryStore({ scheduler: new VirtualScheduler(), autoIndexDelayMs: false, maxBufferedEvents: 3 });
    const seen: StoreEvent[] = [];
    await store.start((e) => seen.push(e));
    store.setAvailable(false);
    for (const name of ["a", "b", "c", "d"]) store.createDb(name);
    store.setAvailable(true);
    expect(seen.map((e) => e.db ?? e.type)).toEqual(["b", "c", "d", "source-resumed"]);
  });

  it("an outage that dropped nothing is not announced", async () => {
    const store = createMemoryStore({ scheduler: new VirtualScheduler(), autoIndexDelayMs: false, maxBufferedEvents: 3 });
    const seen: StoreEvent[] = [];
    await store.start((e) => seen.push(e));
    store.setAvailable(false);
    store.createDb("a");
    store.setAvailable(true);
    store.setAvailable(false);
    store.setAvailable(true);
    expect(seen).toEqual([{ type: "db-created", db: "a" }]);
  });
});
