/**
 * The floor under every compaction policy (request-floor.ts), pinned on an
 * exact model of the churn it describes: dbs written at even spacings, each
 * update adding the same garbage, compactions at any moments taking a db's
 * garbage back to none. The mean garbage of every schedule stays at or
 * above the floor, the floor is reached, and the solved forms (fewest
 * compactions, least concurrency) are the least that satisfy it.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  evenness,
  fewestCompactionsFor,
  leastConcurrencyFor,
  leastGarbageRatio,
  leastRequestsPerCompaction,
  type ChurnShape,
} from "../../../src/core/compaction/request-floor.js";

const SPAN = 1;

interface DbSchedule {
  /** Updates, evenly spaced over the span: at (j + phase) x span / updates. */
  readonly updates: number;
  readonly phase: number;
  /** Compaction moments in [0, span]. */
  readonly compactions: readonly number[];
}

/** The exact mean over the span of one db's garbage (a step function: +g at each update, 0 at each compaction). */
const meanGarbage = (db: DbSchedule, garbagePerUpdate: number): number => {
  const spacing = SPAN / Math.max(1, db.updates);
  const events = [
    ...Array.from({ length: db.updates }, (_, j) => ({ at: Math.min(SPAN, (j + db.phase) * spacing), update: true })),
    ...db.compactions.map((at) => ({ at, update: false })),
  ].sort((a, b) => a.at - b.at || (a.update ? -1 : 1)); // at one moment, the update first: the compaction takes it too
  let garbage = 0;
  let since = 0;
  let area = 0;
  for (const event of events) {
    area += garbage * (event.at - since);
    since = event.at;
    garbage = event.update ? garbage + garbagePerUpdate : 0;
  }
  area += garbage * (SPAN - since);
  return area / SPAN;
};

const dbArb: fc.Arbitrary<DbSchedule> = fc.record({
  updates: fc.integer({ min: 0, max: 40 }),
  phase: fc.double({ min: 0, max: 1, noNaN: true }),
  compactions: fc.array(fc.double({ min: 0, max: SPAN, noNaN: true }), { maxLength: 12 }),
});

const shapeOf = (dbs: readonly DbSchedule[], garbagePerUpdate: number, activePerDb: number): ChurnShape => ({
  garbageBytesPerUpdate: garbagePerUpdate,
  activeBytesPerDb: activePerDb,
  evenness: evenness(dbs.map((db) => db.updates)),
});

describe("the floor under every compaction policy", () => {
  it("no schedule of compactions holds less garbage than the floor says", () => {
    fc.assert(
      fc.property(
        fc.array(dbArb, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 500_000 }),
        fc.integer({ min: 100_000, max: 5_000_000 }),
        (dbs, garbagePerUpdate, activePerDb) => {
          const held = dbs.reduce((sum, db) => sum + meanGarbage(db, garbagePerUpdate), 0) / (dbs.length * activePerDb);
          const updates = dbs.reduce((sum, db) => sum + db.updates, 0);
          const compactions = dbs.reduce((sum, db) => sum + db.compactions.length, 0);
          const floor = leastGarbageRatio(shapeOf(dbs, garbagePerUpdate, activePerDb), updates, compactions, dbs.length);
          expect(held).toBeGreaterThanOrEqual(floor * (1 - 1e-9) - 1e-12);
        },
      ),
    );
  });

  it("equal dbs compacted after every r-th update, the last update at the span's end, hold exactly the floor", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 1, max: 500_000 }),
        (dbCount, run, compactionsPerDb, garbagePerUpdate) => {
          const updatesPerDb = run * (compactionsPerDb + 1);
          const spacing = SPAN / updatesPerDb;
          const db: DbSchedule = {
            updates: updatesPerDb,
            phase: 1,
            compactions: Array.from({ length: compactionsPerDb }, (_, k) => (k + 1) * run * spacing),
          };
          const dbs = Array.from({ length: dbCount }, () => db);
          const activePerDb = 1_000_000;
          const held = dbs.reduce((sum, d) => sum + meanGarbage(d, garbagePerUpdate), 0) / (dbCount * activePerDb);
          const floor = leastGarbageRatio(shapeOf(dbs, garbagePerUpdate, activePerDb), dbCount * updatesPerDb, dbCount * compactionsPerDb, dbCount);
          expect(floor).toBeCloseTo(held, 9);
        },
      ),
    );
  });

  it("the fewest compactions for a file/active target reach it, and one fewer does not", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        fc.double({ min: 0.5, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 1, max: 50 }),
        fc.double({ min: 1.1, max: 6, noNaN: true }),
        (garbagePerLive, even, updates, dbs, fileToActive) => {
          const shape: ChurnShape = { garbageBytesPerUpdate: garbagePerLive * 1e6, activeBytesPerDb: 1e6, evenness: even };
          const fewest = fewestCompactionsFor(shape, updates, dbs, fileToActive);
          expect(leastGarbageRatio(shape, updates, fewest, dbs)).toBeLessThanOrEqual(fileToActive - 1 + 1e-9);
          if (fewest > 0) expect(leastGarbageRatio(shape, updates, fewest - 1, dbs)).toBeGreaterThan(fileToActive - 1 - 1e-9);
        },
      ),
    );
  });

  it("the least concurrency fits the requests into the target, and one less does not", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 0.001, max: 1, noNaN: true }), (compactions, updates, target) => {
        const least = leastConcurrencyFor(compactions, updates, target);
        const cost = (c: number) => (compactions * leastRequestsPerCompaction(c, false)) / updates;
        if (least === undefined) {
          // Not even the starts fit.
          expect(compactions).toBeGreaterThan(0);
          expect(compactions / updates).toBeGreaterThanOrEqual(target - 1e-12);
        } else {
          expect(compactions === 0 || cost(least) <= target + 1e-9).toBe(true);
          if (least > 1) expect(cost(least - 1)).toBeGreaterThan(target - 1e-9);
        }
      }),
    );
  });

  it("evenness is 1 for dbs written alike and falls as the writes gather on a few", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_000 }), { minLength: 1, maxLength: 30 }), (counts) => {
        const e = evenness(counts);
        expect(e).toBeGreaterThan(0);
        expect(e).toBeLessThanOrEqual(1 + 1e-12);
        expect(evenness(counts.map(() => 7))).toBeCloseTo(1, 12);
      }),
    );
    expect(evenness([100, 0, 0, 0])).toBeCloseTo(0.25, 12);
  });

  it("a compaction costs its start, and a shared look when nothing announces its end", () => {
    expect(leastRequestsPerCompaction(1, true)).toBe(1);
    expect(leastRequestsPerCompaction(1, false)).toBe(2);
    expect(leastRequestsPerCompaction(4, false)).toBe(1.25);
  });
});
