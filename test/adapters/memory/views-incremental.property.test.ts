/**
 * Properties of the memory store's view indexes, with the real sandbox:
 * whatever sequence of writes, deletes and partial builds came before, the
 * index answers as one built from scratch over the final documents, and a
 * document's rows are exactly what its current revision emits (the old ones
 * are gone).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore } from "../../../src/adapters/memory/index.js";
import { createSandboxFactory } from "../../../src/adapters/sandbox/index.js";
import type { IndexSandbox } from "../../../src/ports/sandbox.js";
import { viewQuery, type ViewResult } from "../../../src/ports/views.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";

const factory = createSandboxFactory();
let keepAlive: IndexSandbox | undefined;
beforeAll(async () => {
  keepAlive = (await factory.compile([{ name: "keep", kind: "map", source: "function (doc) {}" }])).sandbox;
});
afterAll(() => keepAlive?.dispose());

const DDOC = {
  views: {
    rows: { map: "function (doc) { emit(doc.k, doc.v); if (doc.twice) emit([doc.k, 'again'], doc.v); }" },
    sums: { map: "function (doc) { emit(doc.k, doc.v); if (doc.twice) emit([doc.k, 'again'], doc.v); }", reduce: "_sum" },
  },
};

type Op =
  | { readonly kind: "put"; readonly id: string; readonly k: unknown; readonly v: number; readonly twice: boolean }
  | { readonly kind: "delete"; readonly id: string }
  | { readonly kind: "build" };

const ids = ["a", "b", "B", "c", "é", "x_"];
const keyArb = fc.oneof(fc.constantFrom(null, true, "k", "K", "k\u200B", "z"), fc.integer({ min: -2, max: 2 }), fc.array(fc.constantFrom("k", 1), { maxLength: 2 }));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("put" as const), id: fc.constantFrom(...ids), k: keyArb, v: fc.integer({ min: -9, max: 9 }), twice: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), id: fc.constantFrom(...ids) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "build" as const }) },
);

const newStore = (): MemoryStore => {
  const store = createMemoryStore({ scheduler: new VirtualScheduler(), sandbox: factory });
  store.createDb("db");
  store.putDesignDoc("db", "d", DDOC);
  return store;
};

/** Applies the ops; returns the live documents at the end. */
const apply = async (store: MemoryStore, ops: readonly Op[]): Promise<Map<string, Op & { kind: "put" }>> => {
  const revs = new Map<string, string>();
  const live = new Map<string, Op & { kind: "put" }>();
  for (const op of ops) {
    if (op.kind === "build") {
      await store.updateViewGroup("db", "_design/d");
      continue;
    }
    const doc = op.kind === "put" ? { _id: op.id, _rev: revs.get(op.id), k: op.k, v: op.v, twice: op.twice } : { _id: op.id, _rev: revs.get(op.id), _deleted: true };
    if (op.kind === "delete" && !live.has(op.id)) continue;
    const [result] = store.writeDocs("db", [doc]);
    if (!result?.ok) throw new Error(`write failed: ${JSON.stringify(result)}`);
    revs.set(op.id, result.rev);
    if (op.kind === "put") live.set(op.id, op);
    else live.delete(op.id);
  }
  return live;
};

const answers = async (store: MemoryStore): Promise<ViewResult[]> => [
  await store.queryView("db", "_design/d", "rows", viewQuery()),
  await store.queryView("db", "_design/d", "rows", viewQuery({ descending: true, skip: 1, limit: 5 })),
  await store.queryView("db", "_design/d", "sums", viewQuery({ group: true })),
  await store.queryView("db", "_design/d", "sums", viewQuery({ groupLevel: 1 })),
  await store.queryView("db", "_design/d", "sums", viewQuery()),
];

describe("memory store views: incremental builds", () => {
  it("equal a build from scratch, for any sequence of writes, deletes and builds; old rows are gone", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 25 }), async (ops) => {
        const incremental = newStore();
        const scratch = newStore();
        try {
          const live = await apply(incremental, ops);
          await apply(
            scratch,
            [...live.values()].map((doc) => doc),
          );
          const [ours, theirs] = [await answers(incremental), await answers(scratch)];
          expect(ours).toEqual(theirs);
          // Each live doc's rows are its current revision's emits, nothing older.
          for (const row of ours[0]!.rows) expect(row.value).toBe(live.get(row.id!)?.v);
          const expectedRows = [...live.values()].reduce((n, doc) => n + (doc.twice ? 2 : 1), 0);
          expect(ours[0]!.total_rows).toBe(expectedRows);
        } finally {
          incremental.close();
          scratch.close();
        }
      }),
      { numRuns: 60 },
    );
  });
});
