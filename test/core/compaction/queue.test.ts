import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  emptyQueue,
  queueIn,
  queueInfo,
  queueItems,
  queueLastUpdated,
  queueOut,
  queueSize,
  type PriorityQueue,
} from "../../../src/core/compaction/queue.js";

type Op = { op: "in"; key: string; priority: number; dtMs: number } | { op: "out" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("in" as const),
      key: fc.constantFrom(...Array.from({ length: 30 }, (_, i) => `k${i}`)),
      priority: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.double({ min: 0, max: 100, noNaN: true }), fc.constant(Infinity)),
      dtMs: fc.integer({ min: 0, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ op: "out" as const }) },
);

/** A reference model: an array of entries, ordered by the documented rule. */
interface ModelEntry {
  key: string;
  priority: number;
  atMs: number;
  seq: number;
}
const better = (a: ModelEntry, b: ModelEntry): boolean =>
  a.priority !== b.priority ? a.priority > b.priority : a.atMs !== b.atMs ? a.atMs < b.atMs : a.seq < b.seq;
const sortBestFirst = (m: ModelEntry[]): ModelEntry[] => [...m].sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));

describe("priority queue", () => {
  it("matches a model: capacity respected, out is the best, truncation drops the worst, one entry per key", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), fc.integer({ min: 1, max: 12 }), (ops, capacity) => {
        let q: PriorityQueue<string> = emptyQueue();
        let model: ModelEntry[] = [];
        let nowMs = 0;
        let seq = 0;
        for (const op of ops) {
          if (op.op === "in") {
            nowMs += op.dtMs;
            const before = sortBestFirst(model.filter((e) => e.key !== op.key));
            const entry = { key: op.key, priority: op.priority, atMs: nowMs, seq: seq++ };
            const all = sortBestFirst([...before, entry]);
            const expectedDropped = all.slice(capacity);
            model = all.slice(0, capacity);
            const result = queueIn(q, op.key, op.key, op.priority, nowMs, capacity);
            q = result.queue;
            expect(result.dropped.map((d) => d.key)).toEqual(expectedDropped.reverse().map((e) => e.key));
            if (model.some((e) => e.key === op.key)) expect(queueLastUpdated(q, op.key)).toBe(nowMs);
          } else {
            const out = queueOut(q);
            const best = sortBestFirst(model)[0];
            if (best === undefined) expect(out).toBeUndefined();
            else {
              expect(out?.key).toBe(best.key);
              expect(out?.priority).toBe(best.priority);
              for (const e of model) expect(better(e, best)).toBe(false);
              model = model.filter((e) => e.key !== best.key);
              if (out) q = out.queue;
            }
          }
          expect(queueSize(q)).toBeLessThanOrEqual(capacity);
          expect(queueSize(q)).toBe(model.length);
          const keys = queueItems(q).map((i) => i.key);
          expect(new Set(keys).size).toBe(keys.length);
          expect(keys).toEqual(sortBestFirst(model).map((e) => e.key));
          const info = queueInfo(q);
          const sorted = sortBestFirst(model);
          expect(info).toEqual({
            size: model.length,
            min: sorted[sorted.length - 1]?.priority ?? 0,
            max: sorted[0]?.priority ?? 0,
          });
        }
      }),
    );
  });

  it("ties: equal priority comes out oldest first, then by insertion order (FIFO)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 20 }), fc.boolean(), (keys, sameTime) => {
        let q: PriorityQueue<string> = emptyQueue();
        keys.forEach((k, i) => {
          q = queueIn(q, k, k, 7, sameTime ? 100 : 100 + i, 1000).queue;
        });
        const out: string[] = [];
        for (let item = queueOut(q); item !== undefined; item = queueOut(q)) {
          out.push(item.key);
          q = item.queue;
        }
        expect(out).toEqual(keys);
      }),
    );
  });

  it("re-enqueueing a key replaces its entry (one entry, new priority)", () => {
    let q: PriorityQueue<string> = emptyQueue();
    q = queueIn(q, "a", "a", 5, 1, 10).queue;
    q = queueIn(q, "b", "b", 3, 2, 10).queue;
    q = queueIn(q, "a", "a", 1, 3, 10).queue;
    expect(queueItems(q).map((i) => [i.key, i.priority])).toEqual([
      ["b", 3],
      ["a", 1],
    ]);
    expect(queueInfo(emptyQueue())).toEqual({ size: 0, min: 0, max: 0 });
  });

  it("truncation among equal priorities drops the newest", () => {
    let q: PriorityQueue<string> = emptyQueue();
    q = queueIn(q, "old", "old", 2, 1, 2).queue;
    q = queueIn(q, "mid", "mid", 2, 2, 2).queue;
    const { queue, dropped } = queueIn(q, "new", "new", 2, 3, 2);
    expect(dropped.map((d) => d.key)).toEqual(["new"]);
    expect(queueItems(queue).map((i) => i.key)).toEqual(["old", "mid"]);
  });
});
