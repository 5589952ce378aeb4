/**
 * Small persistent (immutable) collections for the cores (compaction,
 * indexing), on functional-red-black-tree and one rerooted Map
 * (`VersionedMap`), so the reducer can return a new state per event without
 * copying maps that hold every database.
 */
import createRBTree from "functional-red-black-tree";

type Tree<K, V> = createRBTree.Tree<K, V>;

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * An immutable string-keyed map (a `VersionedMap`): the version in use
 * answers at the speed of a Map (it was a hash trie: a walk of a few small
 * arrays per lookup, an eighth of a simulation in cache misses).
 */
export class PMap<V> {
  private constructor(private readonly map: VersionedMap<V>) {}

  static empty<V>(): PMap<V> {
    return new PMap<V>(VersionedMap.empty());
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, value: V): PMap<V> {
    return new PMap(this.map.with(key, value));
  }

  delete(key: string): PMap<V> {
    const next = this.map.without(key);
    return next === this.map ? this : new PMap(next);
  }

  /** Entries in key order (sorted here: callers are rare and want a stable order). */
  entries(): Array<[string, V]> {
    return this.map.entries().sort(([a], [b]) => compareStrings(a, b));
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

  /** Set (or move) `key` to time `atMs`. The old entry leaves the tree; `byKey.set` overwrites it in place (no delete first). */
  set(key: string, atMs: number, value: V): TimedKeys<V> {
    const oldMs = this.byKey.get(key);
    const byTime = oldMs === undefined ? this.byTime : this.byTime.remove([oldMs, key]);
    return new TimedKeys(byTime.insert([atMs, key], value), this.byKey.set(key, atMs));
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

/** What a KeyedSet holds: an immutable entry that carries its own key. */
export interface Keyed {
  readonly key: string;
}

/** In a version's change: the key has no value there (a value may itself be undefined). */
const ABSENT: unique symbol = Symbol("absent");

/**
 * A persistent string-keyed map by rerooting (Baker's trick, as in Conchon
 * and Filliatre's persistent arrays): the versions of one lineage share one
 * mutable Map, held by the version used last; every other version is one
 * change (a key and its value there, or ABSENT) away from a neighbour nearer
 * the holder. Using a version moves the Map to it, undoing changes on the way:
 * the reducer, which uses each new version in turn, pays a Map operation and
 * one small object per change; an old version still answers, in time
 * proportional to its distance.
 *
 * A change points from the old version to the new one, so a version nobody
 * holds is garbage. An empty version never shares its Map: an empty
 * collection kept for long (an initial state) does not hold its successors.
 */
class VersionedMap<T> {
  private key = "";
  private value: T | typeof ABSENT = ABSENT;
  private next: VersionedMap<T> | undefined = undefined;

  private constructor(
    /** Set while this version holds the Map. */
    private map: Map<string, T> | undefined,
    readonly size: number,
  ) {}

  static empty<T>(): VersionedMap<T> {
    return new VersionedMap<T>(new Map(), 0);
  }

  get(key: string): T | undefined {
    return this.held().get(key);
  }

  has(key: string): boolean {
    return this.held().has(key);
  }

  with(key: string, value: T): VersionedMap<T> {
    if (this.size === 0) return new VersionedMap(new Map([[key, value]]), 1);
    const map = this.held();
    // One lookup where the key is there with a defined value (the usual update).
    const found = map.get(key);
    const old = found !== undefined || map.has(key) ? (found as T) : ABSENT;
    map.set(key, value);
    return this.handOver(key, old, old === ABSENT ? this.size + 1 : this.size);
  }

  /** This very version when `key` is not in it. */
  without(key: string): VersionedMap<T> {
    const map = this.held();
    if (!map.has(key)) return this;
    const old = map.get(key) as T;
    map.delete(key);
    return this.handOver(key, old, this.size - 1);
  }

  entries(): Array<[string, T]> {
    return [...this.held()];
  }

  values(): T[] {
    return [...this.held().values()];
  }

  /** The Map, changed just now: a new version holds it, and this one becomes that change undone. */
  private handOver(key: string, old: T | typeof ABSENT, size: number): VersionedMap<T> {
    const next = new VersionedMap(this.map, size);
    this.becomeChange(key, old, next);
    return next;
  }

  private becomeChange(key: string, value: T | typeof ABSENT, next: VersionedMap<T>): void {
    this.map = undefined;
    this.key = key;
    this.value = value;
    this.next = next;
  }

  /** The Map, moved to this version first if another holds it. */
  private held(): Map<string, T> {
    if (this.map !== undefined) return this.map;
    const path: VersionedMap<T>[] = [this];
    let holder = this.next!;
    while (holder.map === undefined) {
      path.push(holder);
      holder = holder.next!;
    }
    const map = holder.map;
    // From the holder back to this version, one change at a time (a loop: the path may be long).
    for (let i = path.length - 1; i >= 0; i--) {
      const version = path[i]!;
      const { key, value } = version;
      holder.becomeChange(key, map.has(key) ? (map.get(key) as T) : ABSENT, version);
      if (value === ABSENT) map.delete(key);
      else map.set(key, value);
      version.map = map;
      version.value = ABSENT;
      version.next = undefined;
      holder = version;
    }
    return map;
  }
}

/**
 * An immutable set of entries, at most one per key (a `VersionedMap` by
 * key): an entry carries its own key, so a map from key to entry needs no
 * second object per entry. Unordered (use PMap for key order).
 */
export class KeyedSet<T extends Keyed> {
  private constructor(private readonly map: VersionedMap<T>) {}

  static empty<T extends Keyed>(): KeyedSet<T> {
    return new KeyedSet<T>(VersionedMap.empty());
  }

  get size(): number {
    return this.map.size;
  }

  /** The entry for `key`. */
  get(key: string): T | undefined {
    return this.map.get(key);
  }

  /** Add `entry`, replacing the entry with the same key. */
  put(entry: T): KeyedSet<T> {
    return new KeyedSet(this.map.with(entry.key, entry));
  }

  /** Add `entry`, replacing the entry with the same key; `old` is the one replaced. */
  swap(entry: T): { set: KeyedSet<T>; old: T | undefined } {
    const old = this.map.get(entry.key);
    return { set: this.put(entry), old };
  }

  delete(key: string): KeyedSet<T> {
    const next = this.map.without(key);
    return next === this.map ? this : new KeyedSet(next);
  }

  /** Entries in no particular order. */
  values(): T[] {
    return this.map.values();
  }
}
