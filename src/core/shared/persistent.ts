/**
 * Small persistent (immutable) collections for the cores (compaction,
 * indexing), on functional-red-black-tree and rerooted mutable collections
 * (`VersionedMap`: a Map, or a Map with a sorted-btree for TimedKeys), so the
 * reducer can return a new state per event without copying maps that hold
 * every database.
 */
import createRBTree from "functional-red-black-tree";
import sortedBTree from "sorted-btree";

type Tree<K, V> = createRBTree.Tree<K, V>;

// A CommonJS module whose class is its `default` export: Node's ES import gets the module object,
// a CommonJS build (tsx on a file outside the package) the class itself.
const BTree = ("default" in sortedBTree ? sortedBTree.default : sortedBTree) as typeof sortedBTree.default;

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

/** One key of a TimedKeys: its time and value. */
export interface TimedEntry<V> {
  readonly key: string;
  readonly atMs: number;
  readonly value: V;
}

const byTimeThenKey = <V>(a: TimedEntry<V>, b: TimedEntry<V>): number => a.atMs - b.atMs || compareStrings(a.key, b.key);

/**
 * The mutable collection behind a lineage of TimedKeys: entries by key, and
 * the same entries in (time, key) order in a B+ tree (sorted-btree), kept in
 * step by `set` and `delete`, the only ways in (rerooting uses them too).
 */
class TimedIndex<V> implements MutableKeyed<TimedEntry<V>> {
  private readonly byKey = new Map<string, TimedEntry<V>>();
  private readonly byTime = new BTree<TimedEntry<V>, undefined>(undefined, byTimeThenKey);

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): TimedEntry<V> | undefined {
    return this.byKey.get(key);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  set(key: string, entry: TimedEntry<V>): void {
    const old = this.byKey.get(key);
    if (old !== undefined) this.byTime.delete(old);
    this.byKey.set(key, entry);
    this.byTime.set(entry, undefined);
  }

  delete(key: string): void {
    const old = this.byKey.get(key);
    if (old === undefined) return;
    this.byTime.delete(old);
    this.byKey.delete(key);
  }

  earliest(): TimedEntry<V> | undefined {
    return this.byTime.minKey();
  }

  /** In (time, key) order. */
  *[Symbol.iterator](): IterableIterator<[string, TimedEntry<V>]> {
    for (const entry of this.byTime.keys()) yield [entry.key, entry];
  }

  values(): IterableIterator<TimedEntry<V>> {
    return this.byTime.keys();
  }
}

/**
 * Keys remembered with a time, forgettable oldest first: the staleness memory
 * ("checked at") and the retry schedule ("due at") both need "what is the
 * earliest" and "drop everything before t" cheaply. A rerooted TimedIndex:
 * the version in use changes a B+ tree in place (it was a persistent
 * red-black tree copying a path of nodes per change, and a (time, key) pair
 * per lookup).
 */
export class TimedKeys<V> {
  private constructor(private readonly versions: VersionedMap<TimedEntry<V>, TimedIndex<V>>) {}

  static empty<V>(): TimedKeys<V> {
    return new TimedKeys<V>(VersionedMap.empty(() => new TimedIndex<V>()));
  }

  get size(): number {
    return this.versions.size;
  }

  timeOf(key: string): number | undefined {
    return this.versions.get(key)?.atMs;
  }

  get(key: string): V | undefined {
    return this.versions.get(key)?.value;
  }

  /** Set (or move) `key` to time `atMs`. */
  set(key: string, atMs: number, value: V): TimedKeys<V> {
    return new TimedKeys(this.versions.with(key, { key, atMs, value }));
  }

  delete(key: string): TimedKeys<V> {
    const next = this.versions.without(key);
    return next === this.versions ? this : new TimedKeys(next);
  }

  /** The earliest entry, if any. */
  earliest(): TimedEntry<V> | undefined {
    return this.versions.backing().earliest();
  }

  /** Remove and return every entry with time <= `atMs`, earliest first. */
  takeUntil(atMs: number): { rest: TimedKeys<V>; taken: Array<TimedEntry<V>> } {
    let rest = new TimedKeys(this.versions);
    const taken: Array<TimedEntry<V>> = [];
    for (let first = rest.earliest(); first !== undefined && first.atMs <= atMs; first = rest.earliest()) {
      taken.push(first);
      rest = rest.delete(first.key);
    }
    return { rest, taken };
  }

  /** Remove the earliest entries until at most `limit` remain. */
  truncate(limit: number): TimedKeys<V> {
    let rest = new TimedKeys(this.versions);
    for (let first = rest.earliest(); first !== undefined && rest.size > limit; first = rest.earliest()) {
      rest = rest.delete(first.key);
    }
    return rest;
  }

  /** In (time, key) order. */
  entries(): Array<TimedEntry<V>> {
    return [...this.versions.backing().values()];
  }
}

/** What a KeyedSet holds: an immutable entry that carries its own key. */
export interface Keyed {
  readonly key: string;
}

/** In a version's change: the key has no value there (a value may itself be undefined). */
const ABSENT: unique symbol = Symbol("absent");

/** What a lineage of versions changes in place: a Map, or anything keyed that changes only by `set` and `delete`. */
interface MutableKeyed<T> extends Iterable<[string, T]> {
  readonly size: number;
  get(key: string): T | undefined;
  has(key: string): boolean;
  set(key: string, value: T): unknown;
  delete(key: string): unknown;
  values(): IterableIterator<T>;
}

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
class VersionedMap<T, B extends MutableKeyed<T> = Map<string, T>> {
  private key = "";
  private value: T | typeof ABSENT = ABSENT;
  private next: VersionedMap<T, B> | undefined = undefined;

  private constructor(
    /** Set while this version holds the collection. */
    private map: B | undefined,
    readonly size: number,
    /** A new, empty collection of the lineage's kind. */
    private readonly make: () => B,
  ) {}

  static empty<T>(): VersionedMap<T>;
  static empty<T, B extends MutableKeyed<T>>(make: () => B): VersionedMap<T, B>;
  static empty<T, B extends MutableKeyed<T>>(make?: () => B): VersionedMap<T, B> {
    const makeB = make ?? ((): B => new Map<string, T>() as unknown as B);
    return new VersionedMap<T, B>(makeB(), 0, makeB);
  }

  get(key: string): T | undefined {
    return this.held().get(key);
  }

  has(key: string): boolean {
    return this.held().has(key);
  }

  with(key: string, value: T): VersionedMap<T, B> {
    if (this.size === 0) {
      const fresh = this.make();
      fresh.set(key, value);
      return new VersionedMap<T, B>(fresh, 1, this.make);
    }
    const map = this.held();
    // One lookup where the key is there with a defined value (the usual update).
    const found = map.get(key);
    const old = found !== undefined || map.has(key) ? (found as T) : ABSENT;
    map.set(key, value);
    return this.handOver(key, old, old === ABSENT ? this.size + 1 : this.size);
  }

  /** This very version when `key` is not in it. */
  without(key: string): VersionedMap<T, B> {
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

  /** The collection as this version sees it, to read only (a TimedIndex's earliest entry). */
  backing(): B {
    return this.held();
  }

  /** The collection, changed just now: a new version holds it, and this one becomes that change undone. */
  private handOver(key: string, old: T | typeof ABSENT, size: number): VersionedMap<T, B> {
    const next = new VersionedMap<T, B>(this.map, size, this.make);
    this.becomeChange(key, old, next);
    return next;
  }

  private becomeChange(key: string, value: T | typeof ABSENT, next: VersionedMap<T, B>): void {
    this.map = undefined;
    this.key = key;
    this.value = value;
    this.next = next;
  }

  /** The collection, moved to this version first if another holds it. */
  private held(): B {
    if (this.map !== undefined) return this.map;
    const path: VersionedMap<T, B>[] = [this];
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
