/**
 * A channel's waiting queue: CouchDB's `smoosh_priority_queue` on a persistent
 * red-black tree. Each key is held once; the highest priority comes out
 * first; when over capacity the lowest is dropped.
 *
 * Order (one, deterministic): higher priority first; among equal priorities
 * the earlier enqueue time first, then the lower insertion counter (FIFO).
 * Deliberate difference: the seed keyed its gb_tree on `{Priority, now()}` and
 * `take_largest` gave the MOST RECENT of equal priorities (LIFO), so a steady
 * stream of equal-priority updates could starve an old item. Truncation drops
 * the worst by the same order: the lowest priority, and among equals the newest.
 *
 * Representation (persistent: every operation returns a new queue and leaves
 * the old one valid; nothing shared is ever written). The items, worst to
 * best, are cut into runs of at most RUN_MAX consecutive slots (windows on
 * sorted arrays). The best run, `top`, is held apart: `out`
 * takes its last item with no tree operation. The other runs are in the
 * red-black tree, each keyed by a separator: a slot no greater than any of its
 * items and greater than every item of the runs before (its first item when
 * made; taking items out leaves it a valid separator). A KeyedSet maps each
 * key to its slot.
 *
 * Why (bench:queue, docs/benchmarks.md): one tree node per item plus a second
 * tree keyed by string cost two deep path copies and a dozen string
 * comparisons per operation. Here the tree has ~1/40 as many nodes, the ends
 * are taken without searching, `in` copies one short array, and a key lookup
 * is a Map lookup.
 */
import createRBTree from "functional-red-black-tree";
import { KeyedSet } from "../shared/persistent.js";

/** One queued item. Never changed once made (old queue versions share it). */
class Slot<V> {
  constructor(
    readonly priority: number,
    readonly enqueuedAtMs: number,
    readonly seq: number,
    readonly key: string,
    readonly value: V,
  ) {}
}

/**
 * Slots `arr[lo..hi)`, ascending, never empty. Runs share arrays (taking an
 * item off either end is a new window on the same array), so an array may
 * still hold up to RUN_MAX items already gone, until its run is next copied.
 */
class Run<V> {
  constructor(
    readonly arr: readonly Slot<V>[],
    readonly lo: number,
    readonly hi: number,
  ) {}
}

/** Longest run. bench:queue: 32 to 64 best (shallower tree vs longer copies); 16 and 128 slower. */
const RUN_MAX = 64;

// Ascending = worse to better, so the first item is the one truncation drops and the last is the next out.
// Written with comparisons, not subtraction: priorities may be Infinity (restored running jobs).
const compareSlots = (a: Slot<unknown>, b: Slot<unknown>): number => {
  const pa = a.priority;
  const pb = b.priority;
  if (pa !== pb) return pa < pb ? -1 : 1;
  if (a.enqueuedAtMs !== b.enqueuedAtMs) return a.enqueuedAtMs > b.enqueuedAtMs ? -1 : 1;
  return b.seq - a.seq;
};

type Runs<V> = createRBTree.Tree<Slot<V>, Run<V>>;

export interface QueueItem<V> {
  readonly key: string;
  readonly value: V;
  readonly priority: number;
  readonly enqueuedAtMs: number;
}

export interface PriorityQueue<V> {
  /** Every run but the best, keyed by separator. */
  readonly runs: Runs<V>;
  /** The best run, kept out of the tree (`out` takes from it); null when the queue is empty. */
  readonly top: Run<V> | null;
  /** Its separator: items of `top` are >= it, items of `runs` are below it. */
  readonly topSep: Slot<V> | null;
  readonly index: KeyedSet<Slot<V>>;
  readonly size: number;
  /** Insertion counter: breaks ties between equal priority and equal time. */
  readonly nextSeq: number;
  /** @deprecated `tree.length` is the item count, for older callers; use `queueSize`. */
  readonly tree: { readonly length: number };
}

class Queue<V> implements PriorityQueue<V> {
  constructor(
    readonly runs: Runs<V>,
    readonly top: Run<V> | null,
    readonly topSep: Slot<V> | null,
    readonly index: KeyedSet<Slot<V>>,
    readonly size: number,
    readonly nextSeq: number,
  ) {}

  get tree(): { readonly length: number } {
    return { length: this.size };
  }
}

type Q<V> = PriorityQueue<V>;

/** A queue of `runs` and `top`; when `top` is null, the best run of `runs` (if any) becomes the top. */
const build = <V>(runs: Runs<V>, top: Run<V> | null, topSep: Slot<V> | null, index: KeyedSet<Slot<V>>, size: number, nextSeq: number): Q<V> => {
  if (top === null && runs.root !== null) {
    const it = runs.end;
    return new Queue(it.remove(), it.value!, it.key!, index, size, nextSeq);
  }
  return new Queue(runs, top, topSep, index, size, nextSeq);
};

export const emptyQueue = <V>(): PriorityQueue<V> =>
  new Queue(createRBTree<Slot<V>, Run<V>>(compareSlots), null, null, KeyedSet.empty(), 0, 0);

export const queueSize = <V>(q: PriorityQueue<V>): number => q.size;

/** Index in `run.arr` of the first slot not less than `slot`. */
const lowerBound = <V>(run: Run<V>, slot: Slot<V>): number => {
  const arr = run.arr;
  let lo = run.lo;
  let hi = run.hi;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareSlots(arr[mid]!, slot) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/** `run`'s items with `slot` added, as a new array. */
const withSlot = <V>(run: Run<V>, slot: Slot<V>): Slot<V>[] => {
  const { arr, lo, hi } = run;
  const at = lowerBound(run, slot);
  const next = new Array<Slot<V>>(hi - lo + 1);
  let j = 0;
  for (let i = lo; i < at; i++) next[j++] = arr[i]!;
  next[j++] = slot;
  for (let i = at; i < hi; i++) next[j++] = arr[i]!;
  return next;
};

/** `run` without its item at `at`; null when that was the last. Either end: no copy. */
const without = <V>(run: Run<V>, at: number): Run<V> | null => {
  const { arr, lo, hi } = run;
  if (hi - lo === 1) return null;
  if (at === lo) return new Run(arr, lo + 1, hi);
  if (at === hi - 1) return new Run(arr, lo, hi - 1);
  const next = new Array<Slot<V>>(hi - lo - 1);
  let j = 0;
  for (let i = lo; i < hi; i++) if (i !== at) next[j++] = arr[i]!;
  return new Run(next, 0, j);
};

/** `run` with `slot` in place of `old`, both belonging to it: one copy. */
const replacedIn = <V>(run: Run<V>, old: Slot<V>, slot: Slot<V>): Run<V> => {
  const { arr, lo, hi } = run;
  const from = lowerBound(run, old);
  const to = lowerBound(run, slot);
  const next = arr.slice(lo, hi);
  // Shift the items between the two positions by one, over the old slot.
  if (to > from) {
    for (let i = from; i < to - 1; i++) next[i - lo] = arr[i + 1]!;
    next[to - 1 - lo] = slot;
  } else {
    for (let i = from; i > to; i--) next[i - lo] = arr[i - 1]!;
    next[to - lo] = slot;
  }
  return new Run(next, 0, hi - lo);
};

const insertSlot = <V>(runs: Runs<V>, slot: Slot<V>): Runs<V> => {
  if (runs.root === null) return runs.insert(slot, new Run([slot], 0, 1));
  // The run to hold `slot`: the last whose separator is <= it. Below every separator: the first
  // run, which then takes `slot` as its separator (removed and inserted again: keys are immutable).
  let it = runs.le(slot);
  const rekey = !it.valid;
  if (rekey) it = runs.begin;
  const next = withSlot(it.value!, slot);
  const n = next.length;
  if (n <= RUN_MAX) return rekey ? it.remove().insert(slot, new Run(next, 0, n)) : it.update(new Run(next, 0, n));
  // Split in two runs sharing the array; the upper one is keyed by its first slot.
  const half = n >>> 1;
  const lower = new Run(next, 0, half);
  return (rekey ? it.remove().insert(slot, lower) : it.update(lower)).insert(next[half]!, new Run(next, half, n));
};

/** `runs` without `slot`, which must be in it. */
const removeSlot = <V>(runs: Runs<V>, slot: Slot<V>): Runs<V> => {
  const it = runs.le(slot);
  const run = it.value!;
  const rest = without(run, lowerBound(run, slot));
  return rest === null ? it.remove() : it.update(rest);
};

/** Add `slot` (not in `q`): to the top run when it is not below its separator, else into the tree. */
const addSlot = <V>(q: Q<V>, slot: Slot<V>, index: KeyedSet<Slot<V>>, size: number, nextSeq: number): Q<V> => {
  const top = q.top;
  if (top === null) return new Queue(q.runs, new Run([slot], 0, 1), slot, index, size, nextSeq);
  const topSep = q.topSep!;
  if (compareSlots(slot, topSep) < 0) return new Queue(insertSlot(q.runs, slot), top, topSep, index, size, nextSeq);
  const next = withSlot(top, slot);
  const n = next.length;
  if (n <= RUN_MAX) return new Queue(q.runs, new Run(next, 0, n), topSep, index, size, nextSeq);
  // Split: the lower half joins the tree (as its best run), the upper half stays on top.
  const half = n >>> 1;
  return new Queue(q.runs.insert(topSep, new Run(next, 0, half)), new Run(next, half, n), next[half]!, index, size, nextSeq);
};

/** Take `slot` (which must be in `q`) out. */
const dropSlot = <V>(q: Q<V>, slot: Slot<V>, index: KeyedSet<Slot<V>>, size: number, nextSeq: number): Q<V> => {
  const top = q.top!;
  if (compareSlots(slot, q.topSep!) < 0) return new Queue(removeSlot(q.runs, slot), top, q.topSep, index, size, nextSeq);
  return build(q.runs, without(top, lowerBound(top, slot)), q.topSep, index, size, nextSeq);
};

/**
 * Put `slot` in place of `old` (which must be in `q`). When both fall in the
 * same run (a re-enqueue at a similar priority), one copy of that run does it.
 */
const swapSlot = <V>(q: Q<V>, old: Slot<V>, slot: Slot<V>, index: KeyedSet<Slot<V>>, size: number, nextSeq: number): Q<V> => {
  const top = q.top!;
  const topSep = q.topSep!;
  const oldOnTop = compareSlots(old, topSep) >= 0;
  if (oldOnTop && compareSlots(slot, topSep) >= 0) return new Queue(q.runs, replacedIn(top, old, slot), topSep, index, size, nextSeq);
  if (!oldOnTop) {
    const it = q.runs.le(old);
    const run = it.value!;
    // Inside the old one's run: not below its separator, not above its last item.
    if (compareSlots(slot, it.key!) >= 0 && compareSlots(slot, run.arr[run.hi - 1]!) < 0) {
      return new Queue(it.update(replacedIn(run, old, slot)), top, topSep, index, size, nextSeq);
    }
  }
  return addSlot(dropSlot(q, old, index, size, nextSeq), slot, index, size, nextSeq);
};

/** The worst item: first of the tree's first run, or of the top when the tree is empty. */
const worstOf = <V>(q: Q<V>): Slot<V> => {
  const run = q.runs.root === null ? q.top! : q.runs.begin.value!;
  return run.arr[run.lo]!;
};

const bestOf = <V>(q: Q<V>): Slot<V> => q.top!.arr[q.top!.hi - 1]!;

/** `q` without its `count` worst items (at most one run's worth; see queueTruncate). */
const dropWorst = <V>(q: Q<V>, count: number, index: KeyedSet<Slot<V>>, size: number): Q<V> => {
  if (q.runs.root === null) {
    const top = q.top!;
    return build(q.runs, top.hi - top.lo === count ? null : new Run(top.arr, top.lo + count, top.hi), q.topSep, index, size, q.nextSeq);
  }
  const first = q.runs.begin;
  const { arr, lo, hi } = first.value!;
  const runs = hi - lo === count ? first.remove() : first.update(new Run(arr, lo + count, hi));
  return new Queue(runs, q.top, q.topSep, index, size, q.nextSeq);
};

export const queueHas = <V>(q: PriorityQueue<V>, key: string): boolean => q.index.get(key) !== undefined;

/** When `key` was last (re-)enqueued, as the seed's `last_updated/2`. */
export const queueLastUpdated = <V>(q: PriorityQueue<V>, key: string): number | undefined =>
  q.index.get(key)?.enqueuedAtMs;

export const queuePriorityOf = <V>(q: PriorityQueue<V>, key: string): number | undefined =>
  q.index.get(key)?.priority;

export const queueRemove = <V>(q: PriorityQueue<V>, key: string): PriorityQueue<V> => {
  const slot = q.index.get(key);
  if (slot === undefined) return q;
  return dropSlot(q, slot, q.index.delete(key), q.size - 1, q.nextSeq);
};

const toItem = <V>(slot: Slot<V>): QueueItem<V> => ({
  key: slot.key,
  value: slot.value,
  priority: slot.priority,
  enqueuedAtMs: slot.enqueuedAtMs,
});

const NONE_DROPPED: readonly QueueItem<never>[] = Object.freeze([]);

/** Drop the worst items until `size <= capacity`; returns what was dropped (worst first). */
export const queueTruncate = <V>(
  q: PriorityQueue<V>,
  capacity: number,
): { queue: PriorityQueue<V>; dropped: readonly QueueItem<V>[] } => {
  const limit = Math.max(0, capacity);
  if (q.size <= limit) return { queue: q, dropped: NONE_DROPPED };
  let queue = q;
  const dropped: QueueItem<V>[] = [];
  while (queue.size > limit) {
    // A run at a time: the tree's first run, or the top when the tree is empty.
    const run = queue.runs.root === null ? queue.top! : queue.runs.begin.value!;
    const take = Math.min(run.hi - run.lo, queue.size - limit);
    let index = queue.index;
    for (let i = run.lo; i < run.lo + take; i++) {
      const slot = run.arr[i]!;
      dropped.push(toItem(slot));
      index = index.delete(slot.key);
    }
    queue = dropWorst(queue, take, index, queue.size - take);
  }
  return { queue, dropped };
};

/**
 * Enqueue `key` (replacing its previous entry, which also refreshes its
 * time), then truncate to `capacity`. The new item itself may be the one
 * dropped when it is the worst.
 */
export const queueIn = <V>(
  q: PriorityQueue<V>,
  key: string,
  value: V,
  priority: number,
  nowMs: number,
  capacity: number,
): { queue: PriorityQueue<V>; dropped: readonly QueueItem<V>[] } => {
  const slot = new Slot(priority, nowMs, q.nextSeq, key, value);
  const full = q.size === capacity && capacity > 0;
  const worst = full ? worstOf(q) : undefined;
  if (worst !== undefined && compareSlots(slot, worst) < 0) {
    // Full, and worse than the worst: dropped, unless it replaces its own earlier entry.
    const old = q.index.get(key);
    if (old === undefined) return { queue: q, dropped: [toItem(slot)] };
    return queueTruncate(swapSlot(q, old, slot, q.index.put(slot), q.size, q.nextSeq + 1), capacity);
  }
  const { set: index, old } = q.index.swap(slot);
  if (old !== undefined) return queueTruncate(swapSlot(q, old, slot, index, q.size, q.nextSeq + 1), capacity);
  if (worst !== undefined) {
    // Full, and the key is new: the worst goes.
    const rest = index.delete(worst.key);
    return { queue: addSlot(dropWorst(q, 1, rest, q.size - 1), slot, rest, q.size, q.nextSeq + 1), dropped: [toItem(worst)] };
  }
  return queueTruncate(addSlot(q, slot, index, q.size + 1, q.nextSeq + 1), capacity);
};

/** Take the best item (highest priority; oldest among equals). */
export const queueOut = <V>(q: PriorityQueue<V>): (QueueItem<V> & { queue: PriorityQueue<V> }) | undefined => {
  const top = q.top;
  if (top === null) return undefined;
  const slot = top.arr[top.hi - 1]!;
  const rest = top.hi - top.lo === 1 ? null : new Run(top.arr, top.lo, top.hi - 1);
  return {
    key: slot.key,
    value: slot.value,
    priority: slot.priority,
    enqueuedAtMs: slot.enqueuedAtMs,
    queue: build(q.runs, rest, q.topSep, q.index.delete(slot.key), q.size - 1, q.nextSeq),
  };
};

/** The best item without taking it. */
export const queuePeek = <V>(q: PriorityQueue<V>): QueueItem<V> | undefined => (q.size === 0 ? undefined : toItem(bestOf(q)));

/** CouchDB 3.4's `waiting` block: an empty queue shows min = max = 0. */
export const queueInfo = <V>(q: PriorityQueue<V>): { size: number; min: number; max: number } =>
  q.size === 0 ? { size: 0, min: 0, max: 0 } : { size: q.size, min: worstOf(q).priority, max: bestOf(q).priority };

/** Every item, best first (snapshots, status). */
export const queueItems = <V>(q: PriorityQueue<V>): QueueItem<V>[] => {
  const out: QueueItem<V>[] = [];
  const visit = (run: Run<V>): void => {
    for (let i = run.lo; i < run.hi; i++) out.push(toItem(run.arr[i]!));
  };
  q.runs.forEach((_separator, run) => {
    visit(run);
  });
  if (q.top !== null) visit(q.top);
  return out.reverse();
};
