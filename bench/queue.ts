/**
 * bench:queue — the smoosh priority queue (persistent red-black tree) against
 * a plain sorted array (binary-search insert, splice, pop) doing the same
 * 1,000,000 mixed operations at capacity 9999: 70% in (re-enqueueing keys
 * from a pool of 20,000, so replacements and truncations both happen), 30% out.
 * Both run in this process, so the ratio is what matters, not the absolute numbers.
 *
 * The plain array is destructive: each op overwrites the previous queue. The
 * reducer needs the old state to stay valid (pure steps, replay), so a second
 * baseline pays for that the simple way, copying the array and its index on
 * every op (run on the first 20,000 ops only: it is slow). The tree sits
 * between the two: it keeps every version at O(log n) per op.
 */
import { createRandom } from "../src/adapters/memory/random.js";
import { emptyQueue, queueIn, queueOut, queueSize, type PriorityQueue } from "../src/core/compaction/queue.js";

const OPS = 1_000_000;
const CAPACITY = 9999;
const KEY_POOL = 20_000;

type Op = { in: true; key: string; priority: number } | { in: false };
const makeOps = (): Op[] => {
  // The project's seeded PRNG, so both runs see the same operations.
  const random = createRandom(20261121);
  const rnd = (): number => random.next();
  const keys = Array.from({ length: KEY_POOL }, (_, i) => `shards/00000000-7fffffff/db${i}.1700000000`);
  const ops: Op[] = [];
  for (let i = 0; i < OPS; i++) {
    if (rnd() < 0.7) {
      // Ratio-like priorities quantized to 1/16, plus some slack-like large integers.
      const priority = rnd() < 0.8 ? Math.round((2 + rnd() * 30) * 16) / 16 : Math.floor(rnd() * 2 ** 33);
      ops.push({ in: true, key: keys[Math.floor(rnd() * KEY_POOL)] ?? "k", priority });
    } else ops.push({ in: false });
  }
  return ops;
};

/** The baseline: entries sorted worst..best, a Map for key lookup, same tie rule (FIFO). */
class SortedArrayQueue {
  /** true: copy before every change, so the previous version stays intact (what a pure step needs). */
  constructor(private readonly copyOnWrite = false) {}

  private items: Array<{ key: string; priority: number; atMs: number; seq: number }> = [];
  private byKey = new Map<string, { priority: number; atMs: number; seq: number }>();

  private beforeChange(): void {
    if (!this.copyOnWrite) return;
    this.items = this.items.slice();
    this.byKey = new Map(this.byKey);
  }
  private seq = 0;

  // Worse first: lower priority, later time, higher seq.
  private static worse(a: { priority: number; atMs: number; seq: number }, b: { priority: number; atMs: number; seq: number }): boolean {
    if (a.priority !== b.priority) return a.priority < b.priority;
    if (a.atMs !== b.atMs) return a.atMs > b.atMs;
    return a.seq > b.seq;
  }

  private indexOf(e: { priority: number; atMs: number; seq: number }): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (SortedArrayQueue.worse(this.items[mid]!, e)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  in(key: string, priority: number, nowMs: number, capacity: number): void {
    this.beforeChange();
    const old = this.byKey.get(key);
    if (old !== undefined) {
      this.items.splice(this.indexOf(old), 1);
      this.byKey.delete(key);
    }
    const e = { key, priority, atMs: nowMs, seq: this.seq++ };
    this.items.splice(this.indexOf(e), 0, e);
    this.byKey.set(key, e);
    while (this.items.length > capacity) {
      const worst = this.items.shift();
      if (worst !== undefined) this.byKey.delete(worst.key);
    }
  }

  out(): string | undefined {
    this.beforeChange();
    const best = this.items.pop();
    if (best !== undefined) this.byKey.delete(best.key);
    return best?.key;
  }

  get size(): number {
    return this.items.length;
  }
}

const time = (label: string, run: () => string, opCount = OPS): number => {
  const started = process.hrtime.bigint();
  const check = run();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const opsPerSec = opCount / seconds;
  console.log(`${label.padEnd(28)} ${Math.round(opsPerSec).toLocaleString("en-US").padStart(12)} ops/s  (${seconds.toFixed(2)} s, ${check})`);
  return opsPerSec;
};

const ops = makeOps();
console.log(`${OPS.toLocaleString("en-US")} ops (70% in / 30% out), capacity ${CAPACITY}, ${KEY_POOL} distinct keys`);

const rbOps = time("red-black tree (smoosh)", () => {
  let q: PriorityQueue<string> = emptyQueue();
  let outs = 0;
  ops.forEach((op, i) => {
    if (op.in) q = queueIn(q, op.key, op.key, op.priority, i, CAPACITY).queue;
    else {
      const r = queueOut(q);
      if (r !== undefined) {
        q = r.queue;
        outs++;
      }
    }
  });
  return `final size ${queueSize(q)}, ${outs} outs`;
});

const arrayOps = time("sorted array (baseline)", () => {
  const q = new SortedArrayQueue();
  let outs = 0;
  ops.forEach((op, i) => {
    if (op.in) q.in(op.key, op.priority, i, CAPACITY);
    else if (q.out() !== undefined) outs++;
  });
  return `final size ${q.size}, ${outs} outs`;
});

const COPY_OPS = 20_000;
const copyOps = time(
  "sorted array, copy per op",
  () => {
    const q = new SortedArrayQueue(true);
    let outs = 0;
    ops.slice(0, COPY_OPS).forEach((op, i) => {
      if (op.in) q.in(op.key, op.priority, i, CAPACITY);
      else if (q.out() !== undefined) outs++;
    });
    return `first ${COPY_OPS} ops, final size ${q.size}, ${outs} outs`;
  },
  COPY_OPS,
);

console.log(`ratio tree / destructive array: ${(rbOps / arrayOps).toFixed(2)}x`);
console.log(`ratio tree / copy-per-op array (both keep old versions): ${(rbOps / copyOps).toFixed(2)}x`);
