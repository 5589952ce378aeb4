/**
 * `jobLookIntervalMs` on the memory store: a db compaction's end is seen as a
 * CouchDB client sees it, in an info read after the swap, or by the
 * watcher's own read one and a half intervals on (unannounced-ends.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore } from "../../../src/adapters/memory/index.js";
import { compactionDurationMs, dbCompactionCost } from "../../../src/adapters/memory/storage-model.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";
import { createCompactionDaemon } from "../../../src/runtime/compaction/daemon.js";
import { defaultSmooshConfig } from "../../../src/core/compaction/index.js";
import { silentLogger } from "../../../src/adapters/logging/index.js";
import { lookDelayMs } from "../../../src/core/compaction/look-delay.js";

const LOOK_MS = 1_000;

/** A store whose compaction ends are seen by reads (`LOOK_MS`), or reported at once ("events"). */
function world(ends: "looks" | "events" = "looks", lookMs = LOOK_MS): { scheduler: VirtualScheduler; store: MemoryStore } {
  const scheduler = new VirtualScheduler({ startMs: 1_000_000 });
  return { scheduler, store: createMemoryStore({ scheduler, autoIndexDelayMs: false, jobLookIntervalMs: ends === "looks" ? lookMs : undefined }) };
}

/** A db with garbage: `docs` docs written three times (2,000: past ratio_dbs' 1 MiB `min_size`). */
function wasteful(store: MemoryStore, db: string, docs = 200): void {
  store.createDb(db);
  const revs = new Map<string, string>();
  for (let round = 0; round < 3; round++) {
    const batch = Array.from({ length: docs }, (_, i) => ({ _id: `d${i}`, _rev: revs.get(`d${i}`), pad: "p".repeat(300), round }));
    for (const r of store.writeDocs(db, batch)) if (r.ok) revs.set(r.id, r.rev);
  }
}

/** Start a db compaction and run the clock to just after its swap; whether `done` has settled then. */
async function swapped(scheduler: VirtualScheduler, store: MemoryStore, db: string): Promise<{ done: Promise<unknown>; settled: () => boolean }> {
  const info = (await store.dbInfo(db))!;
  const durationMs = compactionDurationMs(dbCompactionCost(store.model), info.activeBytes, info.docCount + info.docDelCount);
  const handle = await store.startJob({ kind: "db", db });
  let settled = false;
  const done = handle.done.then((outcome) => {
    settled = true;
    return outcome;
  });
  await scheduler.advanceByAsync(durationMs);
  return { done, settled: () => settled };
}

describe("memory store: compaction ends unannounced (jobLookIntervalMs)", () => {
  it("exposes the interval for the daemon, and rejects one that is not a positive number, naming it", () => {
    expect(world().store.jobLookIntervalMs).toBe(LOOK_MS);
    expect(world("events").store.jobLookIntervalMs).toBeUndefined();
    const scheduler = new VirtualScheduler({ startMs: 0 });
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createMemoryStore({ scheduler, jobLookIntervalMs: bad })).toThrow(/jobLookIntervalMs must be a positive number of ms, got/);
    }
  });

  it("a swapped db compaction ends when an info read of its db sees it, not before", async () => {
    for (const read of ["dbInfo", "dbInfos"] as const) {
      const { scheduler, store } = world();
      wasteful(store, "a");
      wasteful(store, "b");
      const job = await swapped(scheduler, store, "a");
      expect(job.settled()).toBe(false);
      // A read of another db sees nothing of a's.
      await store.dbInfo("b");
      await scheduler.advanceByAsync(0);
      expect(job.settled()).toBe(false);
      const info = read === "dbInfo" ? await store.dbInfo("a") : (await store.dbInfos(["b", "a"])).get("a");
      expect(info?.compactionRunning).toBe(false);
      expect(await job.done).toMatchObject({ ok: true });
      expect(store.jobWatcherOwnReads()).toBe(0);
    }
  });

  it("with no read, the watcher reads by itself 1.5 intervals after the swap, and counts it", async () => {
    const { scheduler, store } = world();
    wasteful(store, "a");
    const job = await swapped(scheduler, store, "a");
    await scheduler.advanceByAsync(1.5 * LOOK_MS - 1);
    expect(job.settled()).toBe(false);
    await scheduler.advanceByAsync(1);
    expect(await job.done).toMatchObject({ ok: true });
    expect(store.jobWatcherOwnReads()).toBe(1);
    // The own read's timer is gone with the end: nothing is left waiting.
    await store.dbInfo("a");
    expect(store.jobWatcherOwnReads()).toBe(1);
  });

  it("after a compaction that ran many intervals, the watcher's own read waits 1.5 times the grown wait (look-delay.ts)", async () => {
    const lookMs = 10;
    const { scheduler, store } = world("looks", lookMs);
    wasteful(store, "a", 2_000);
    const startedMs = scheduler.nowMs();
    const job = await swapped(scheduler, store, "a");
    const ranForMs = scheduler.nowMs() - startedMs;
    const waitMs = 1.5 * lookDelayMs(ranForMs, lookMs);
    // The compaction ran long enough for the wait to have grown past the interval.
    expect(waitMs).toBeGreaterThan(1.5 * lookMs);
    await scheduler.advanceByAsync(waitMs - 1);
    expect(job.settled()).toBe(false);
    await scheduler.advanceByAsync(1);
    expect(await job.done).toMatchObject({ ok: true });
    expect(store.jobWatcherOwnReads()).toBe(1);
  });

  it("while the store is switched off, the watcher's own read fails and is tried again 1.5 intervals on", async () => {
    const { scheduler, store } = world();
    wasteful(store, "a");
    const job = await swapped(scheduler, store, "a");
    store.setAvailable(false);
    await scheduler.advanceByAsync(1.5 * LOOK_MS);
    expect(job.settled()).toBe(false);
    expect(store.jobWatcherOwnReads()).toBe(1);
    store.setAvailable(true);
    await scheduler.advanceByAsync(1.5 * LOOK_MS);
    expect(await job.done).toMatchObject({ ok: true });
    expect(store.jobWatcherOwnReads()).toBe(2);
  });

  it("a cancelled compaction ends at once: the caller knows", async () => {
    const { store } = world();
    wasteful(store, "a");
    const handle = await store.startJob({ kind: "db", db: "a" });
    await handle.cancel?.();
    expect(await handle.done).toEqual({ ok: false, reason: "cancelled" });
  });

  it("without the option, ends are reported at the swap, as before", async () => {
    const { scheduler, store } = world("events");
    wasteful(store, "a");
    const job = await swapped(scheduler, store, "a");
    await scheduler.advanceByAsync(0);
    expect(job.settled()).toBe(true);
  });

  it("whatever the reads, each end is seen at the first read of its db after the swap, or 1.5 intervals on", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ afterMs: fc.integer({ min: 0, max: 2_000 }), db: fc.constantFrom("a", "b") }), { maxLength: 8 }), async (reads) => {
        const { scheduler, store } = world();
        wasteful(store, "a");
        wasteful(store, "b");
        const job = await swapped(scheduler, store, "a");
        const swapMs = scheduler.nowMs();
        let endMs: number | undefined;
        void job.done.then(() => {
          endMs ??= scheduler.nowMs();
        });
        for (const read of reads) {
          await scheduler.advanceByAsync(read.afterMs);
          await store.dbInfo(read.db);
          await scheduler.advanceByAsync(0);
        }
        await scheduler.advanceByAsync(2 * LOOK_MS);
        let expected = swapMs + 1.5 * LOOK_MS;
        let atMs = swapMs;
        for (const read of reads) {
          atMs += read.afterMs;
          if (read.db === "a" && atMs < expected) {
            expected = atMs;
            break;
          }
        }
        expect(endMs).toBe(expected);
        expect(store.jobWatcherOwnReads()).toBe(expected === swapMs + 1.5 * LOOK_MS ? 1 : 0);
      }),
      { numRuns: 100, seed: 29_001 },
    );
  });

  it("the compaction daemon looks at a compaction of many intervals less and less often, and the watcher still never reads by itself", async () => {
    const lookMs = 10;
    const { scheduler, store } = world("looks", lookMs);
    wasteful(store, "a", 2_000);
    const info = (await store.dbInfo("a"))!;
    const durationMs = compactionDurationMs(dbCompactionCost(store.model), info.activeBytes, info.docCount + info.docDelCount);
    let reads = 0;
    // Every info read the daemon makes (its looks are `dbInfos` of the running db with its channel's next).
    const counting = new Proxy(store, {
      get: (target, name, receiver) => {
        const value: unknown = Reflect.get(target, name, receiver);
        if ((name !== "dbInfos" && name !== "dbInfo") || typeof value !== "function") return value;
        return (...args: unknown[]) => {
          reads += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const daemon = createCompactionDaemon({ store: counting, scheduler, config: { ...defaultSmooshConfig, waitSecs: 0 }, logger: silentLogger, events: store.createEventSource() });
    await daemon.start();
    store.writeDocs("a", [{ _id: "poke" }]);
    await scheduler.advanceByAsync(10 * durationMs);
    await daemon.stop();
    expect(daemon.metrics().started).toBe(1);
    expect(store.jobWatcherOwnReads()).toBe(0);
    expect((await store.dbInfo("a"))?.compactionRunning).toBe(false);
    // Looks every interval made 24 reads in all here (its checks included); the grown waits make 13.
    expect(durationMs / lookMs).toBeGreaterThan(20);
    expect(reads).toBeLessThan(((2 / 3) * durationMs) / lookMs);
  });

  it("the compaction daemon on such a store looks at its jobs, so the watcher never reads by itself", async () => {
    const { scheduler, store } = world();
    for (const db of ["a", "b", "c"]) wasteful(store, db, 2_000);
    const daemon = createCompactionDaemon({
      store,
      scheduler,
      config: { ...defaultSmooshConfig, waitSecs: 0 },
      logger: silentLogger,
      events: store.createEventSource(),
    });
    await daemon.start();
    for (const db of ["a", "b", "c"]) store.writeDocs(db, [{ _id: "poke" }]);
    await scheduler.advanceByAsync(120_000);
    await daemon.stop();
    expect(daemon.metrics().started).toBe(3);
    expect(store.jobWatcherOwnReads()).toBe(0);
    for (const db of ["a", "b", "c"]) expect((await store.dbInfo(db))?.compactionRunning).toBe(false);
  });
});
