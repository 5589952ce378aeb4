/**
 * The memory store keeps its byte totals running (byte-ledger.ts) instead of
 * summing every file when asked. Property: after any sequence of db
 * creations and deletions, document and design doc writes, view builds,
 * compactions and cleanups (some finishing, some cut short by a deletion),
 * the running totals equal a fresh count over every file.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore } from "../../../src/adapters/memory/index.js";
import { createSandboxFactory } from "../../../src/adapters/sandbox/index.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";

const sandbox = createSandboxFactory({ thread: "main", engine: "node-vm" });
beforeAll(() => sandbox.ready());

const dbs = ["a", "b", "c"];
const docIds = ["d1", "d2", "d3", "d4"];

type Op =
  | { readonly kind: "create" | "delete" | "build" | "compact-db" | "compact-views" | "cleanup"; readonly db: string }
  | { readonly kind: "put" | "remove"; readonly db: string; readonly id: string; readonly size: number }
  | { readonly kind: "views"; readonly db: string; readonly generation: number }
  | { readonly kind: "advance"; readonly ms: number };

const dbArb = fc.constantFrom(...dbs);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom("create" as const, "delete" as const), db: dbArb }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("put" as const), db: dbArb, id: fc.constantFrom(...docIds), size: fc.integer({ min: 0, max: 300 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove" as const), db: dbArb, id: fc.constantFrom(...docIds), size: fc.constant(0) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("views" as const), db: dbArb, generation: fc.integer({ min: 0, max: 2 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constantFrom("build" as const, "compact-db" as const, "compact-views" as const, "cleanup" as const), db: dbArb }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 3_000 }) }) },
);

const apply = async (store: MemoryStore, scheduler: VirtualScheduler, op: Op): Promise<void> => {
  const ignore = (): undefined => undefined;
  switch (op.kind) {
    case "create":
      store.createDb(op.db);
      return;
    case "delete":
      store.deleteDb(op.db);
      return;
    case "put":
    case "remove": {
      const current = store.dbExists(op.db) ? await store.getDocOrTombstone(op.db, op.id) : undefined;
      const rev = current?._rev;
      if (op.kind === "put") store.putDoc(op.db, { _id: op.id, _rev: rev, n: op.size, pad: "x".repeat(op.size) });
      else if (rev !== undefined) store.deleteDoc(op.db, op.id, rev);
      return;
    }
    case "views":
      if (!store.dbExists(op.db)) return;
      {
        const current = await store.getDocOrTombstone(op.db, "_design/v");
        store.putDesignDoc(op.db, "_design/v", { views: { n: { map: `function (doc) { emit(doc.n, ${op.generation}); }` } } }, current?._rev);
      }
      return;
    case "build":
      await store.buildViews(op.db).catch(ignore);
      return;
    case "compact-db":
      await store.startJob({ kind: "db", db: op.db }).catch(ignore);
      return;
    case "compact-views":
      await store.startJob({ kind: "view", db: op.db, ddoc: "_design/v" }).catch(ignore);
      return;
    case "cleanup":
      await store.startJob({ kind: "cleanup", db: op.db }).catch(ignore);
      return;
    case "advance":
      await scheduler.advanceByAsync(op.ms);
      return;
  }
};

describe("memory store: running byte totals", () => {
  it("equal a fresh count over every file after every operation", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 80, size: "max" }), async (ops) => {
        const scheduler = new VirtualScheduler();
        const store = createMemoryStore({ scheduler, sandbox, autoIndexDelayMs: 1_000 });
        for (const db of dbs) store.createDb(db);
        for (const op of ops) {
          await apply(store, scheduler, op);
          expect(store.totals()).toEqual(store.recountTotals());
        }
        await scheduler.runUntilIdleAsync();
        expect(store.totals()).toEqual(store.recountTotals());
        store.close();
      }),
      { numRuns: 150 },
    );
  });

  it("drop a deleted db's files, views included, and count its successor afresh", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, sandbox });
    store.createDb("a");
    store.putDesignDoc("a", "_design/v", { views: { n: { map: "function (doc) { emit(doc.n, 1); }" } } });
    store.putDoc("a", { _id: "d", n: 1 });
    await store.buildViews("a");
    const withDb = store.totals();
    expect(withDb.viewFileBytes).toBeGreaterThan(0);
    store.deleteDb("a");
    expect(store.totals()).toEqual({ dbFileBytes: 0, dbActiveBytes: 0, viewFileBytes: 0, viewActiveBytes: 0, dbAppendedBytes: 0 });
    store.createDb("a");
    expect(store.totals()).toEqual(store.recountTotals());
    expect(store.totals().dbFileBytes).toBe(store.model.headerBytes);
    store.close();
  });
});
