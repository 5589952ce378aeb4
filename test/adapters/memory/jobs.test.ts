/** Compaction jobs on the virtual clock: timing, catch-up, suspend/resume/cancel, adopt, faults. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore } from "../../../src/adapters/memory/index.js";
import { compactionDurationMs, copyDurationMs, dbCompactionCost, viewCompactionCost } from "../../../src/adapters/memory/storage-model.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";
import type { JobHandle, JobOutcome } from "../../../src/ports/store.js";

function world(): { scheduler: VirtualScheduler; store: MemoryStore } {
  const scheduler = new VirtualScheduler({ startMs: 1_000_000 });
  return { scheduler, store: createMemoryStore({ scheduler, autoIndexDelayMs: false }) };
}

/** `docs` docs of `size` bytes, each rewritten `rounds` times. */
function fill(store: MemoryStore, db: string, docs: number, size: number, rounds = 1): Map<string, string> {
  if (!store.dbExists(db)) store.createDb(db);
  const revs = new Map<string, string>();
  for (let round = 0; round < rounds; round++) {
    const batch = Array.from({ length: docs }, (_, i) => ({ _id: `d${i}`, _rev: revs.get(`d${i}`), pad: "p".repeat(size), round }));
    for (const r of store.writeDocs(db, batch)) if (r.ok) revs.set(r.id, r.rev);
  }
  return revs;
}

/** A design doc with one view of `doc.round` (a row per doc, as the CouchDB timings' `emit(doc.n, 1)`). */
function withView(store: MemoryStore, db: string): void {
  if (!store.dbExists(db)) store.createDb(db);
  store.putDesignDoc(db, "_design/v", { views: { by_round: { map: "function (doc) { emit(doc.round, 1); }" } } });
}

/** A job's handle settles `durationMs` from now, not a millisecond sooner (`meanwhile` runs then): its outcome. */
async function settlesAfter(scheduler: VirtualScheduler, handle: JobHandle, durationMs: number, meanwhile?: () => Promise<void>): Promise<JobOutcome> {
  let settled = false;
  void handle.done.then(() => {
    settled = true;
  });
  scheduler.advanceBy(durationMs - 1);
  await Promise.resolve();
  expect(settled).toBe(false);
  await meanwhile?.();
  scheduler.advanceBy(1);
  return handle.done;
}

describe("memory store: compaction jobs", () => {
  it("takes startup + live bytes / throughput on the scheduler; compactionRunning meanwhile", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 10, max: 3000 }), fc.integer({ min: 1, max: 4 }), async (docs, size, rounds) => {
        const { scheduler, store } = world();
        fill(store, "db", docs, size, rounds);
        const before = await store.dbInfo("db");
        if (before === undefined) throw new Error("no db");
        const expectedMs = compactionDurationMs(dbCompactionCost(store.model), before.activeBytes, before.docCount + before.docDelCount);
        const handle = await store.startJob({ kind: "db", db: "db" });
        const outcome = await settlesAfter(scheduler, handle, expectedMs, async () => {
          expect((await store.dbInfo("db"))?.compactionRunning).toBe(true);
          expect(store.activeTasks()).toHaveLength(1);
        });
        expect(outcome).toEqual({ ok: true, reclaimedBytes: before.fileBytes - ((await store.dbInfo("db"))?.fileBytes ?? NaN) });
        expect((await store.dbInfo("db"))?.compactionRunning).toBe(false);
        expect(store.activeTasks()).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });

  it("more live data takes longer (proportional beyond the fixed startup)", async () => {
    const timeFor = async (docs: number): Promise<number> => {
      const { scheduler, store } = world();
      fill(store, "db", docs, 1000);
      const handle = await store.startJob({ kind: "db", db: "db" });
      const start = scheduler.nowMs();
      scheduler.runUntilIdle();
      await handle.done;
      return scheduler.nowMs() - start - store.model.compactionStartupMs;
    };
    const small = await timeFor(1000);
    const big = await timeFor(4000);
    expect(big / small).toBeGreaterThan(3.5);
    expect(big / small).toBeLessThan(4.5);
  });

  it("writes during compaction are caught up in extra passes and kept", async () => {
    const { scheduler, store } = world();
    fill(store, "db", 500, 500, 3);
    const info = await store.dbInfo("db");
    const firstPassMs = compactionDurationMs(dbCompactionCost(store.model), info?.activeBytes ?? 0, info?.docCount ?? 0);
    const handle = await store.startJob({ kind: "db", db: "db" });
    scheduler.advanceBy(Math.floor(firstPassMs / 2));
    store.writeDocs("db", Array.from({ length: 200 }, (_, i) => ({ _id: `new${i}`, pad: "n".repeat(500) })));
    const seqDuringCompaction = (await store.dbInfo("db"))?.updateSeqNumber;
    scheduler.runUntilIdle();
    expect(await handle.done).toMatchObject({ ok: true });
    const after = await store.dbInfo("db");
    expect(after).toMatchObject({ docCount: 700, compactedSeqNumber: seqDuringCompaction });
    expect(after?.fileBytes).toBeLessThanOrEqual(store.model.headerBytes + Math.ceil((after?.activeBytes ?? 0) * (1 + store.model.compactedOverheadRatio)));
  });

  it("starting again while running returns the same job (CouchDB's 202); attach watches it", async () => {
    const { scheduler, store } = world();
    fill(store, "db", 100, 100, 2);
    const first = await store.startJob({ kind: "db", db: "db" });
    const second = await store.startJob({ kind: "db", db: "db" });
    const attached = await store.attachJob({ kind: "db", db: "db" });
    expect(second.done).toBe(first.done);
    expect(attached.done).toBe(first.done);
    expect(store.activeTasks()).toHaveLength(1);
    scheduler.runUntilIdle();
    expect(await attached.done).toMatchObject({ ok: true });
    // Nothing running: an already-finished handle.
    expect(await (await store.attachJob({ kind: "db", db: "db" })).done).toEqual({ ok: true });
  });

  it("suspend stops the clock of the job; resume continues where it was", async () => {
    const { scheduler, store } = world();
    fill(store, "db", 200, 1000);
    const info = await store.dbInfo("db");
    const totalMs = compactionDurationMs(dbCompactionCost(store.model), info?.activeBytes ?? 0, info?.docCount ?? 0);
    const handle = await store.startJob({ kind: "db", db: "db" });
    const start = scheduler.nowMs();
    scheduler.advanceBy(Math.floor(totalMs / 2));
    await handle.suspend?.();
    expect(store.activeTasks()[0]?.phase).toBe("suspended");
    scheduler.advanceBy(60_000);
    expect(scheduler.pendingTimers()).toBe(0);
    expect((await store.dbInfo("db"))?.compactionRunning).toBe(true);
    await handle.resume?.();
    scheduler.runUntilIdle();
    expect(await handle.done).toMatchObject({ ok: true });
    expect(scheduler.nowMs() - start).toBe(totalMs + 60_000);
  });

  it("a view index compacts at its own cost: startup + live bytes / its rate, whatever the rows", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 3 }), async (docs, rounds) => {
        const { scheduler, store } = world();
        withView(store, "db");
        fill(store, "db", docs, 100, rounds);
        await store.buildViews("db");
        const before = await store.viewIndexInfo("db", "_design/v");
        if (before === undefined) throw new Error("no index");
        const expectedMs = compactionDurationMs(viewCompactionCost(store.model), before.activeBytes, docs);
        const handle = await store.startJob({ kind: "view", db: "db", ddoc: "_design/v" });
        expect(await settlesAfter(scheduler, handle, expectedMs)).toMatchObject({ ok: true });
      }),
      { numRuns: 15 },
    );
  });

  it("a view compaction is far quicker than its db's, as on CouchDB 3.4.3 (2,000 docs: 15-17 ms against 115-213 ms)", async () => {
    const { scheduler, store } = world();
    withView(store, "db");
    fill(store, "db", 2000, 250, 3);
    await store.buildViews("db");
    const timeOf = async (job: Parameters<MemoryStore["startJob"]>[0]): Promise<number> => {
      const start = scheduler.nowMs();
      const handle = await store.startJob(job);
      scheduler.runUntilIdle();
      expect(await handle.done).toMatchObject({ ok: true });
      return scheduler.nowMs() - start;
    };
    const viewMs = await timeOf({ kind: "view", db: "db", ddoc: "_design/v" });
    const dbMs = await timeOf({ kind: "db", db: "db" });
    expect(viewMs).toBeLessThan(40);
    expect(dbMs / viewMs).toBeGreaterThan(5);
  });

  it("a view compaction catches up what the index appended meanwhile at the view rate", async () => {
    const { scheduler, store } = world();
    withView(store, "db");
    fill(store, "db", 300, 100, 2);
    await store.buildViews("db");
    const before = await store.viewIndexInfo("db", "_design/v");
    if (before === undefined) throw new Error("no index");
    const cost = viewCompactionCost(store.model);
    const firstPassMs = compactionDurationMs(cost, before.activeBytes, 300);
    const start = scheduler.nowMs();
    const handle = await store.startJob({ kind: "view", db: "db", ddoc: "_design/v" });
    scheduler.advanceBy(Math.floor(firstPassMs / 2));
    store.writeDocs("db", Array.from({ length: 300 }, (_, i) => ({ _id: `new${i}`, round: 9 })));
    await store.buildViews("db");
    const appendedBytes = ((await store.viewIndexInfo("db", "_design/v"))?.fileBytes ?? NaN) - before.fileBytes;
    expect(appendedBytes).toBeGreaterThan(0);
    scheduler.runUntilIdle();
    expect(await handle.done).toMatchObject({ ok: true });
    expect(scheduler.nowMs() - start).toBe(firstPassMs + copyDurationMs(cost, appendedBytes));
  });

  it("cancel leaves the file unchanged", async () => {
    const { scheduler, store } = world();
    fill(store, "db", 200, 500, 3);
    const before = await store.dbInfo("db");
    const handle = await store.startJob({ kind: "db", db: "db" });
    scheduler.advanceBy(10);
    await handle.cancel?.();
    expect(await handle.done).toEqual({ ok: false, reason: "cancelled" });
    scheduler.runUntilIdle();
    expect(await store.dbInfo("db")).toEqual(before);
  });

  it("a db deleted mid-compaction fails the job with a reason", async () => {
    const { scheduler, store } = world();
    fill(store, "db", 50, 50);
    const handle = await store.startJob({ kind: "db", db: "db" });
    scheduler.advanceBy(5);
    store.deleteDb("db");
    expect(await handle.done).toEqual({ ok: false, reason: "database db was deleted" });
    expect(scheduler.runUntilIdle()).toBe(0);
    await expect(store.startJob({ kind: "db", db: "db" })).rejects.toThrow(/not_found/);
  });

  it("injected faults fail the next jobs of a db (and only those), file untouched", async () => {
    const { scheduler, store } = world();
    fill(store, "db", 50, 50, 2);
    fill(store, "other", 50, 50, 2);
    store.failNextJobs("db", 2, "disk full", "db");
    const before = await store.dbInfo("db");
    for (let i = 0; i < 2; i++) {
      const handle = await store.startJob({ kind: "db", db: "db" });
      scheduler.runUntilIdle();
      expect(await handle.done).toEqual({ ok: false, reason: "disk full" });
      expect(await store.dbInfo("db")).toEqual(before);
    }
    const otherHandle = await store.startJob({ kind: "db", db: "other" });
    scheduler.runUntilIdle();
    expect(await otherHandle.done).toMatchObject({ ok: true });
    const third = await store.startJob({ kind: "db", db: "db" });
    scheduler.runUntilIdle();
    expect(await third.done).toMatchObject({ ok: true });
  });
});
