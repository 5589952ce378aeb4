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
 */
import createRBTree from "functional-red-black-tree";
import { PMap } from "./persistent.js";

interface SlotKey {
  readonly priority: number;
  readonly enqueuedAtMs: number;
  readonly seq: number;
}

interface Slot<V> {
  readonly key: string;
  readonly value: V;
}

// Ascending = worse to better, so `begin` is the one truncation drops and `end` is the next out.
// Written with comparisons, not subtraction: priorities may be Infinity (restored running jobs).
const compareSlots = (a: SlotKey, b: SlotKey): number => {
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
  if (a.enqueuedAtMs !== b.enqueuedAtMs) return a.enqueuedAtMs > b.enqueuedAtMs ? -1 : 1;
  return b.seq - a.seq;
};

export interface QueueItem<V> {
  readonly key: string;
  readonly value: V;
  readonly priority: number;
  readonly enqueuedAtMs: number;
}

export interface PriorityQueue<V> {
  readonly tree: createRBTree.Tree<SlotKey, Slot<V>>;
  readonly index: PMap<SlotKey>;
  /** Insertion counter: breaks ties between equal priority and equal time. */
  readonly nextSeq: number;
}

export const emptyQueue = <V>(): PriorityQueue<V> => ({
  tree: createRBTree<SlotKey, Slot<V>>(compareSlots),
  index: PMap.empty(),
  nextSeq: 0,
});

export const queueSize = <V>(q: PriorityQueue<V>): number => q.tree.length;

export const queueHas = <V>(q: PriorityQueue<V>, key: string): boolean => q.index.has(key);

/** When `key` was last (re-)enqueued, as the seed's `last_updated/2`. */
export const queueLastUpdated = <V>(q: PriorityQueue<V>, key: string): number | undefined =>
  q.index.get(key)?.enqueuedAtMs;

export const queuePriorityOf = <V>(q: PriorityQueue<V>, key: string): number | undefined =>
  q.index.get(key)?.priority;

export const queueRemove = <V>(q: PriorityQueue<V>, key: string): PriorityQueue<V> => {
  const slot = q.index.get(key);
  if (slot === undefined) return q;
  return { tree: q.tree.remove(slot), index: q.index.delete(key), nextSeq: q.nextSeq };
};

const itemAt = <V>(it: createRBTree.Iterator<SlotKey, Slot<V>>): QueueItem<V> | undefined =>
  it.valid && it.key !== undefined && it.value !== undefined
    ? { key: it.value.key, value: it.value.value, priority: it.key.priority, enqueuedAtMs: it.key.enqueuedAtMs }
    : undefined;

/** Drop the worst items until `size <= capacity`; returns what was dropped (worst first). */
export const queueTruncate = <V>(
  q: PriorityQueue<V>,
  capacity: number,
): { queue: PriorityQueue<V>; dropped: QueueItem<V>[] } => {
  let queue = q;
  const dropped: QueueItem<V>[] = [];
  while (queue.tree.length > Math.max(0, capacity)) {
    const worst = itemAt(queue.tree.begin);
    if (worst === undefined) break;
    dropped.push(worst);
    queue = queueRemove(queue, worst.key);
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
): { queue: PriorityQueue<V>; dropped: QueueItem<V>[] } => {
  const base = queueRemove(q, key);
  const slot: SlotKey = { priority, enqueuedAtMs: nowMs, seq: base.nextSeq };
  const inserted: PriorityQueue<V> = {
    tree: base.tree.insert(slot, { key, value }),
    index: base.index.set(key, slot),
    nextSeq: base.nextSeq + 1,
  };
  return queueTruncate(inserted, capacity);
};

/** Take the best item (highest priority; oldest among equals). */
export const queueOut = <V>(q: PriorityQueue<V>): (QueueItem<V> & { queue: PriorityQueue<V> }) | undefined => {
  const best = itemAt(q.tree.end);
  if (best === undefined) return undefined;
  return { ...best, queue: queueRemove(q, best.key) };
};

/** The best item without taking it. */
export const queuePeek = <V>(q: PriorityQueue<V>): QueueItem<V> | undefined => itemAt(q.tree.end);

/** CouchDB 3.4's `waiting` block: an empty queue shows min = max = 0. */
export const queueInfo = <V>(q: PriorityQueue<V>): { size: number; min: number; max: number } => {
  const worst = itemAt(q.tree.begin);
  const best = itemAt(q.tree.end);
  return { size: q.tree.length, min: worst?.priority ?? 0, max: best?.priority ?? 0 };
};

/** Every item, best first (snapshots, status). */
export const queueItems = <V>(q: PriorityQueue<V>): QueueItem<V>[] => {
  const out: QueueItem<V>[] = [];
  q.tree.forEach((k, v) => {
    out.push({ key: v.key, value: v.value, priority: k.priority, enqueuedAtMs: k.enqueuedAtMs });
  });
  return out.reverse();
};
