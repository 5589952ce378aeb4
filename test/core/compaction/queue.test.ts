import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { KeyedSet } from "../../../src/core/shared/persistent.js";
import {
  emptyQueue,
  queueHas,
  queueIn,
  queueInfo,
  queueItems,
  queueLastUpdated,
  queueOut,
  queuePeek,
  queuePriorityOf,
  queueRemove,
  queueSize,
  queueTruncate,
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

/** A plain reference queue: entries kept best first by the documented rule. */
class ModelQueue {
  entries: ModelEntry[] = [];
  private seq = 0;

  in(key: string, priority: number, atMs: number, capacity: number): string[] {
    const entry = { key, priority, atMs, seq: this.seq++ };
    const all = this.entries.filter((e) => e.key !== key);
    const at = all.findIndex((e) => better(entry, e));
    all.splice(at < 0 ? all.length : at, 0, entry);
    const limit = Math.max(0, capacity);
    this.entries = all.slice(0, limit);
    return all
      .slice(limit)
      .reverse()
      .map((e) => e.key);
  }

  out(): ModelEntry | undefined {
    return this.entries.shift();
  }

  remove(key: string): void {
    this.entries = this.entries.filter((e) => e.key !== key);
  }

  truncate(capacity: number): string[] {
    const limit = Math.max(0, capacity);
    const dropped = this.entries.slice(limit).reverse();
    this.entries = this.entries.slice(0, limit);
    return dropped.map((e) => e.key);
  }
}

type BigOp =
  | { op: "in"; key: number; priority: number; dtMs: number }
  | { op: "out"; times: number }
  | { op: "remove"; key: number }
  | { op: "truncate"; capacity: number };

/** Long sequences over many keys, so the queue holds hundreds of items (many runs of the tree). */
const bigOpArb = (keys: number): fc.Arbitrary<BigOp> =>
  fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({
        op: fc.constant("in" as const),
        key: fc.integer({ min: 0, max: keys - 1 }),
        // Few distinct priorities (many ties), some spread ones, and Infinity.
        priority: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 100_000 }), fc.constant(Infinity)),
        // Time mostly goes forward, sometimes stands still or goes back (the order rule still holds).
        dtMs: fc.oneof(fc.constant(1), fc.constant(0), fc.integer({ min: -5, max: 5 })),
      }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant("out" as const), times: fc.integer({ min: 1, max: 40 }) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("remove" as const), key: fc.integer({ min: 0, max: keys - 1 }) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("truncate" as const), capacity: fc.integer({ min: 0, max: 600 }) }) },
  );

describe("priority queue against a reference model, at sizes of hundreds", () => {
  it("every operation answers as the model does; every version stays as it was", () => {
    fc.assert(
      fc.property(
        fc.array(bigOpArb(700), { minLength: 200, maxLength: 1500, size: "max" }),
        fc.integer({ min: 1, max: 600 }),
        (ops, capacity) => {
          let q: PriorityQueue<string> = emptyQueue();
          const model = new ModelQueue();
          let nowMs = 1_000;
          // Every 97th version, with what it held then: checked again at the end (persistence).
          const kept: Array<{ queue: PriorityQueue<string>; keys: string[] }> = [];
          ops.forEach((op, step) => {
            if (op.op === "in") {
              nowMs += op.dtMs;
              const key = `k${op.key}`;
              const result = queueIn(q, key, key, op.priority, nowMs, capacity);
              expect(result.dropped.map((d) => d.key)).toEqual(model.in(key, op.priority, nowMs, capacity));
              q = result.queue;
            } else if (op.op === "out") {
              for (let i = 0; i < op.times; i++) {
                const out = queueOut(q);
                const best = model.out();
                expect(out && [out.key, out.priority, out.enqueuedAtMs]).toEqual(best && [best.key, best.priority, best.atMs]);
                if (out) q = out.queue;
              }
            } else if (op.op === "remove") {
              q = queueRemove(q, `k${op.key}`);
              model.remove(`k${op.key}`);
            } else {
              const result = queueTruncate(q, op.capacity);
              expect(result.dropped.map((d) => d.key)).toEqual(model.truncate(op.capacity));
              q = result.queue;
            }
            const first = model.entries[0];
            const last = model.entries[model.entries.length - 1];
            expect([queueSize(q), queuePeek(q)?.key, queueInfo(q)]).toEqual([
              model.entries.length,
              first?.key,
              { size: model.entries.length, min: last?.priority ?? 0, max: first?.priority ?? 0 },
            ]);
            if (step % 97 === 0 || step === ops.length - 1) {
              const keys = model.entries.map((e) => e.key);
              expect(queueItems(q).map((i) => i.key)).toEqual(keys);
              for (const e of model.entries) {
                expect(queueHas(q, e.key)).toBe(true);
                expect(queuePriorityOf(q, e.key)).toBe(e.priority);
                expect(queueLastUpdated(q, e.key)).toBe(e.atMs);
              }
              kept.push({ queue: q, keys });
            }
          });
          for (const { queue, keys } of kept) expect(queueItems(queue).map((i) => i.key)).toEqual(keys);
          expect(queueHas(q, "never")).toBe(false);
        },
      ),
      { numRuns: 30 },
    );
  });

  it("a version keeps answering after later versions were built from it", () => {
    let q: PriorityQueue<string> = emptyQueue();
    for (let i = 0; i < 500; i++) q = queueIn(q, `k${i}`, `k${i}`, i % 7, i, 1000).queue;
    const before = queueItems(q);
    // Branch twice from the same version: both branches and the original stay independent.
    let a = q;
    for (let i = 0; i < 300; i++) a = queueOut(a)?.queue ?? a;
    let b = q;
    for (let i = 0; i < 300; i++) b = queueIn(b, `k${i * 3}`, "b", 3.5, 1000 + i, 400).queue;
    expect(queueItems(q)).toEqual(before);
    expect(queueSize(a)).toBe(200);
    expect(queueItems(a)).toEqual(before.slice(300));
    expect(queueSize(b)).toBe(400);
    expect(queueItems(q)).toEqual(before);
  });
});

describe("priority queue: arrival patterns", () => {
  // Worst first (every item a new minimum), best first, zigzag, all equal, and re-enqueues that
  // move an item a little (within its neighbourhood) or far, up and down.
  const patterns: Array<[string, (i: number) => { key: number; priority: number }]> = [
    ["worst first", (i) => ({ key: i, priority: 10_000 - i })],
    ["best first", (i) => ({ key: i, priority: i })],
    ["zigzag", (i) => ({ key: i, priority: i % 2 === 0 ? i : 10_000 - i })],
    ["all equal", (i) => ({ key: i, priority: 5 })],
    ["small moves", (i) => (i < 300 ? { key: i, priority: i * 10 } : { key: (i * 37) % 300, priority: ((i * 37) % 300) * 10 + ((i % 9) - 4) * 15 })],
    ["far moves", (i) => (i < 300 ? { key: i, priority: i } : { key: (i * 53) % 300, priority: (i * 7919) % 1000 })],
  ];
  for (const [name, at] of patterns) {
    it(`answers as the model does (${name})`, () => {
      for (const capacity of [250, 1000]) {
        let q: PriorityQueue<string> = emptyQueue();
        const model = new ModelQueue();
        for (let i = 0; i < 900; i++) {
          const { key, priority } = at(i);
          const result = queueIn(q, `k${key}`, `k${key}`, priority, i, capacity);
          expect(result.dropped.map((d) => d.key)).toEqual(model.in(`k${key}`, priority, i, capacity));
          q = result.queue;
          if (i % 7 === 6) {
            const out = queueOut(q);
            expect(out?.key).toBe(model.out()?.key);
            q = out?.queue ?? q;
          }
          expect(queueItems(q).map((item) => item.key)).toEqual(model.entries.map((e) => e.key));
        }
        // Then take every key out by name, in a scattered order.
        for (let i = 0; i < 900; i++) {
          const key = `k${(i * 389) % 900}`;
          q = queueRemove(q, key);
          model.remove(key);
          if (i % 5 === 0) expect(queueItems(q).map((item) => item.key)).toEqual(model.entries.map((e) => e.key));
        }
        expect(queueSize(q)).toBe(0);
      }
    });
  }
});

interface Entry {
  key: string;
  value: number;
}

describe("KeyedSet (the queue's key index)", () => {
  it("matches a Map, and old versions stay intact", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 300 }), fc.integer()), { maxLength: 600, size: "max" }),
        (ops) => {
          let set = KeyedSet.empty<Entry>();
          const model = new Map<string, number>();
          const versions: Array<{ set: KeyedSet<Entry>; model: Map<string, number> }> = [];
          ops.forEach(([put, k, value], step) => {
            const key = `key${k}`;
            if (put) {
              set = set.put({ key, value });
              model.set(key, value);
            } else {
              set = set.delete(key);
              model.delete(key);
            }
            if (set.size !== model.size) expect(set.size).toBe(model.size);
            // Every 25th version and the last, with what they held then: checked at the end (persistence).
            if (step % 25 === 0 || step === ops.length - 1) versions.push({ set, model: new Map(model) });
          });
          for (const { set: version, model: expected } of versions) {
            const keys = Array.from({ length: 301 }, (_, k) => `key${k}`);
            expect(keys.map((key) => version.get(key)?.value)).toEqual(keys.map((key) => expected.get(key)));
            expect(new Map(version.values().map((e) => [e.key, e.value]))).toEqual(expected);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
