import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStore, createWorkload } from "../../../src/adapters/memory/index.js";
import { nextFloat, nextInt, seedPrng } from "../../../src/core/shared/prng.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";

describe("prng", () => {
  it("is pure and stays in range", () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 1, max: 1000 }), (seed, bound) => {
        const state = seedPrng(seed);
        expect(nextFloat(state)).toEqual(nextFloat(state));
        const [value] = nextFloat(state);
        expect(value).toBeGreaterThanOrEqual(0);
        expect(value).toBeLessThan(1);
        const [int] = nextInt(state, bound);
        expect(Number.isInteger(int) && int >= 0 && int < bound).toBe(true);
      }),
    );
  });

  it("is roughly uniform", () => {
    let state = seedPrng(7);
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const [value, next] = nextInt(state, 10);
      buckets[value] = (buckets[value] ?? 0) + 1;
      state = next;
    }
    for (const count of buckets) expect(Math.abs(count - 1000)).toBeLessThan(150);
  });
});

describe("workload", () => {
  const make = (seed: number) => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: 1000 });
    const workload = createWorkload({ store, scheduler, random: seed, dbCount: 4, writesPerSecond: 50, updateFraction: 0.5, deleteFraction: 0.1, docSizeBytes: 300, ddocFraction: 0.5, viewChangeFraction: 0.01 });
    return { scheduler, store, workload };
  };

  it("is deterministic for a seed and creates garbage", async () => {
    const a = make(42);
    const b = make(42);
    const statsA = a.workload.step(2000);
    b.workload.step(2000);
    expect(statsA.operations).toBe(2000);
    expect(statsA.inserts + statsA.updates + statsA.deletes + statsA.viewChanges).toBe(2000);
    expect(statsA.rejected).toBe(0);
    expect(a.store.totals()).toEqual(b.store.totals());
    expect(await a.store.listDbs()).toEqual(["workload-000", "workload-001", "workload-002", "workload-003"]);
    expect((await a.store.designDocs("workload-000")).length).toBe(1);
    expect((await a.store.designDocs("workload-003")).length).toBe(0);
    const totals = a.store.totals();
    expect(totals.dbFileBytes).toBeGreaterThan(2 * totals.dbActiveBytes);
  });

  it("writes at writesPerSecond on the scheduler's clock and stops", () => {
    const { scheduler, workload } = make(1);
    workload.start();
    scheduler.advanceBy(10_000);
    expect(workload.stats().operations).toBe(500);
    workload.stop();
    scheduler.advanceBy(10_000);
    expect(workload.stats().operations).toBe(500);
  });

  it("recovers when a db is deleted under it", async () => {
    const { store, workload } = make(3);
    workload.step(200);
    for (const db of workload.dbs) store.deleteDb(db);
    const stats = workload.step(200);
    expect(stats.rejected).toBe(0);
    expect((await store.listDbs()).length).toBe(4);
  });
});
