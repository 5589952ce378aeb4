/**
 * Small persistent (immutable, structure-sharing) collections on
 * functional-red-black-tree, so the reducer can return a new state per event
 * in O(log n) instead of copying maps that hold every database.
 */
import createRBTree from "functional-red-black-tree";

type Tree<K, V> = createRBTree.Tree<K, V>;

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** An immutable string-keyed map. */
export class PMap<V> {
  private constructor(private readonly tree: Tree<string, V>) {}

  static empty<V>(): PMap<V> {
    return new PMap<V>(createRBTree<string, V>(compareStrings));
  }

  get size(): number {
    return this.tree.length;
  }

  get(key: string): V | undefined {
    const it = this.tree.find(key);
    return it.valid ? it.value : undefined;
  }

  has(key: string): boolean {
    return this.tree.find(key).valid;
  }

  set(key: string, value: V): PMap<V> {
    const it = this.tree.find(key);
    return new PMap(it.valid ? it.update(value) : this.tree.insert(key, value));
  }

  delete(key: string): PMap<V> {
    const it = this.tree.find(key);
    return it.valid ? new PMap(it.remove()) : this;
  }

  /** Entries in key order. */
  entries(): Array<[string, V]> {
    const out: Array<[string, V]> = [];
    this.tree.forEach((k, v) => {
      out.push([k, v]);
    });
    return out;
  }
}

/**
 * A bounded first-in-first-out queue that holds each key at most once:
 * pushing a key already inside is a no-op, pushing into a full queue is
 * refused (the caller counts and logs the drop).
 */
export class BoundedFifo<V> {
  private constructor(
    private readonly order: Tree<number, { key: string; value: V }>,
    private readonly index: PMap<number>,
    private readonly nextSeq: number,
    readonly limit: number,
  ) {}

  static empty<V>(limit: number): BoundedFifo<V> {
    return new BoundedFifo<V>(createRBTree<number, { key: string; value: V }>((a, b) => a - b), PMap.empty(), 0, limit);
  }

  get size(): number {
    return this.order.length;
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  /** `full`: refused because the queue holds `limit` items; `duplicate`: already inside. */
  push(key: string, value: V): { fifo: BoundedFifo<V>; result: "added" | "duplicate" | "full" } {
    if (this.index.has(key)) return { fifo: this, result: "duplicate" };
    if (this.order.length >= this.limit) return { fifo: this, result: "full" };
    const seq = this.nextSeq;
    return {
      fifo: new BoundedFifo(this.order.insert(seq, { key, value }), this.index.set(key, seq), seq + 1, this.limit),
      result: "added",
    };
  }

  shift(): { fifo: BoundedFifo<V>; key: string; value: V } | undefined {
    const first = this.order.begin;
    if (!first.valid || first.value === undefined) return undefined;
    const { key, value } = first.value;
    return { fifo: new BoundedFifo(first.remove(), this.index.delete(key), this.nextSeq, this.limit), key, value };
  }

  delete(key: string): BoundedFifo<V> {
    const seq = this.index.get(key);
    if (seq === undefined) return this;
    return new BoundedFifo(this.order.remove(seq), this.index.delete(key), this.nextSeq, this.limit);
  }

  /** Keep only the items `keep` accepts. O(n): for rare events (db deleted). */
  filter(keep: (key: string, value: V) => boolean): BoundedFifo<V> {
    const doomed: string[] = [];
    this.order.forEach((_seq, item) => {
      if (!keep(item.key, item.value)) doomed.push(item.key);
    });
    return doomed.reduce<BoundedFifo<V>>((fifo, key) => fifo.delete(key), this);
  }

  withLimit(limit: number): BoundedFifo<V> {
    return new BoundedFifo(this.order, this.index, this.nextSeq, limit);
  }

  values(): V[] {
    return this.order.values.map((item) => item.value);
  }
}

/**
 * Keys remembered with a time, forgettable oldest first: the staleness memory
 * ("checked at") and the retry schedule ("due at") both need "what is the
 * earliest" and "drop everything before t" cheaply.
 */
export class TimedKeys<V> {
  private constructor(
    private readonly byTime: Tree<readonly [number, string], V>,
    private readonly byKey: PMap<number>,
  ) {}

  static empty<V>(): TimedKeys<V> {
    return new TimedKeys<V>(
      createRBTree<readonly [number, string], V>((a, b) => a[0] - b[0] || compareStrings(a[1], b[1])),
      PMap.empty(),
    );
  }

  get size(): number {
    return this.byKey.size;
  }

  timeOf(key: string): number | undefined {
    return this.byKey.get(key);
  }

  get(key: string): V | undefined {
    const atMs = this.byKey.get(key);
    if (atMs === undefined) return undefined;
    const it = this.byTime.find([atMs, key]);
    return it.valid ? it.value : undefined;
  }

  /** Set (or move) `key` to time `atMs`. */
  set(key: string, atMs: number, value: V): TimedKeys<V> {
    const base = this.delete(key);
    return new TimedKeys(base.byTime.insert([atMs, key], value), base.byKey.set(key, atMs));
  }

  delete(key: string): TimedKeys<V> {
    const atMs = this.byKey.get(key);
    if (atMs === undefined) return this;
    return new TimedKeys(this.byTime.remove([atMs, key]), this.byKey.delete(key));
  }

  /** The earliest entry, if any. */
  earliest(): { key: string; atMs: number; value: V } | undefined {
    const it = this.byTime.begin;
    if (!it.valid || it.key === undefined) return undefined;
    return { key: it.key[1], atMs: it.key[0], value: it.value as V };
  }

  /** Remove and return every entry with time <= `atMs`, earliest first. */
  takeUntil(atMs: number): { rest: TimedKeys<V>; taken: Array<{ key: string; atMs: number; value: V }> } {
    let rest = new TimedKeys(this.byTime, this.byKey);
    const taken: Array<{ key: string; atMs: number; value: V }> = [];
    for (let first = rest.earliest(); first !== undefined && first.atMs <= atMs; first = rest.earliest()) {
      taken.push(first);
      rest = rest.delete(first.key);
    }
    return { rest, taken };
  }

  /** Remove the earliest entries until at most `limit` remain. */
  truncate(limit: number): TimedKeys<V> {
    let rest = new TimedKeys(this.byTime, this.byKey);
    for (let first = rest.earliest(); first !== undefined && rest.size > limit; first = rest.earliest()) {
      rest = rest.delete(first.key);
    }
    return rest;
  }

  entries(): Array<{ key: string; atMs: number; value: V }> {
    const out: Array<{ key: string; atMs: number; value: V }> = [];
    this.byTime.forEach((k, v) => {
      out.push({ key: k[1], atMs: k[0], value: v });
    });
    return out;
  }
}
