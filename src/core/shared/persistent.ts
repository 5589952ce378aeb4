/**
 * Small persistent (immutable, structure-sharing) collections for the cores (compaction, indexing), on
 * functional-red-black-tree (and one hash trie, KeyedSet), so the reducer can
 * return a new state per event in O(log n) instead of copying maps that hold
 * every database.
 */
import createRBTree from "functional-red-black-tree";

type Tree<K, V> = createRBTree.Tree<K, V>;

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** One PMap entry in the hash trie. */
interface MapEntry<V> extends Keyed {
  readonly value: V;
}

/**
 * An immutable string-keyed map on the hash trie (KeyedSet): get, set and
 * delete walk about log32(n) small arrays with no string comparisons (it was
 * a red-black tree keyed by string: a tenth of a simulation in compares).
 */
export class PMap<V> {
  private constructor(private readonly set_: KeyedSet<MapEntry<V>>) {}

  static empty<V>(): PMap<V> {
    return new PMap<V>(KeyedSet.empty());
  }

  get size(): number {
    return this.set_.size;
  }

  get(key: string): V | undefined {
    return this.set_.get(key, hashString(key))?.value;
  }

  has(key: string): boolean {
    return this.set_.get(key, hashString(key)) !== undefined;
  }

  set(key: string, value: V): PMap<V> {
    return new PMap(this.set_.put({ key, hash: hashString(key), value }));
  }

  delete(key: string): PMap<V> {
    const next = this.set_.delete(key, hashString(key));
    return next === this.set_ ? this : new PMap(next);
  }

  /** Entries in key order (sorted here: callers are rare and want a stable order). */
  entries(): Array<[string, V]> {
    return this.set_
      .values()
      .map((e): [string, V] => [e.key, e.value])
      .sort(([a], [b]) => compareStrings(a, b));
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

/**
 * 32-bit hash of a string (FNV-1a over UTF-16 code units, then a murmur3
 * finalizer so every 5-bit slice is well mixed), for KeyedSet entries.
 */
export const hashString = (s: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
};

const popcount = (x: number): number => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
};

/** What a KeyedSet holds: an immutable entry that carries its own key and that key's hash. */
export interface Keyed {
  readonly key: string;
  readonly hash: number;
}

/**
 * Trie nodes are plain arrays (one object per level). Bitmap node:
 * `[bitmap, ...children]`, child i present when bit i of the bitmap is set
 * (5 bits of the hash per level), each an entry or a sub-node (an array).
 * Collision node (entries whose 32-bit hashes are equal): `[null, hash, ...entries]`.
 */
type HNode = unknown[];

const EMPTY_ROOT: HNode = [0];

const hGet = <T extends Keyed>(root: HNode, hash: number, key: string): T | undefined => {
  let node = root;
  let shift = 0;
  for (;;) {
    const bitmap = node[0] as number | null;
    if (bitmap === null) {
      if (node[1] !== hash) return undefined;
      for (let i = 2; i < node.length; i++) if ((node[i] as T).key === key) return node[i] as T;
      return undefined;
    }
    const bit = 1 << ((hash >>> shift) & 31);
    if ((bitmap & bit) === 0) return undefined;
    const child = node[1 + popcount(bitmap & (bit - 1))];
    if (Array.isArray(child)) {
      node = child;
      shift += 5;
    } else return (child as T).hash === hash && (child as T).key === key ? (child as T) : undefined;
  }
};

/** A copy of `node` with `node[i] = x`. */
const withAt = (node: HNode, i: number, x: unknown): HNode => {
  const out = node.slice();
  out[i] = x;
  return out;
};

/** A copy of `node` with `x` inserted at `i`, and `head` in place of `node[0]`. */
const insertAt = (node: HNode, i: number, x: unknown, head: unknown): HNode => {
  const n = node.length;
  const out = new Array<unknown>(n + 1);
  out[0] = head;
  for (let j = 1; j < i; j++) out[j] = node[j];
  out[i] = x;
  for (let j = i; j < n; j++) out[j + 1] = node[j];
  return out;
};

/** A copy of `node` without `node[i]`, and `head` in place of `node[0]`. */
const removeAt = (node: HNode, i: number, head: unknown): HNode => {
  const n = node.length - 1;
  const out = new Array<unknown>(n);
  out[0] = head;
  for (let j = 1; j < i; j++) out[j] = node[j];
  for (let j = i; j < n; j++) out[j] = node[j + 1];
  return out;
};

/** The smallest node holding two entries whose hashes agree below `shift`. */
const pairNode = (shift: number, a: Keyed, b: Keyed): HNode => {
  if (a.hash === b.hash) return [null, a.hash, a, b];
  const ba = (a.hash >>> shift) & 31;
  const bb = (b.hash >>> shift) & 31;
  if (ba === bb) return [1 << ba, pairNode(shift + 5, a, b)];
  return ba < bb ? [(1 << ba) | (1 << bb), a, b] : [(1 << ba) | (1 << bb), b, a];
};

/** Set by hPut: the entry it replaced, if any (no allocation for a second result). */
let replaced: Keyed | undefined;

const hPut = (node: HNode, shift: number, entry: Keyed): HNode => {
  const hash = entry.hash;
  const bitmap = node[0] as number | null;
  if (bitmap === null) {
    if (node[1] !== hash) {
      // Another hash reached a collision node: push the node one level down under a bitmap node.
      return hPut([1 << (((node[1] as number) >>> shift) & 31), node], shift, entry);
    }
    for (let i = 2; i < node.length; i++) {
      if ((node[i] as Keyed).key === entry.key) {
        replaced = node[i] as Keyed;
        return withAt(node, i, entry);
      }
    }
    return insertAt(node, node.length, entry, null);
  }
  const bit = 1 << ((hash >>> shift) & 31);
  const i = 1 + popcount(bitmap & (bit - 1));
  if ((bitmap & bit) === 0) return insertAt(node, i, entry, bitmap | bit);
  const child = node[i];
  if (Array.isArray(child)) return withAt(node, i, hPut(child, shift + 5, entry));
  if ((child as Keyed).hash === hash && (child as Keyed).key === entry.key) {
    replaced = child as Keyed;
    return withAt(node, i, entry);
  }
  return withAt(node, i, pairNode(shift + 5, child as Keyed, entry));
};

/**
 * `node` without the entry for `key` (the same array when there is none);
 * `null` when nothing is left. A sub-node left with one entry is folded into its parent.
 */
const hDel = (node: HNode, shift: number, hash: number, key: string): HNode | null => {
  const bitmap = node[0] as number | null;
  if (bitmap === null) {
    if (node[1] !== hash) return node;
    for (let i = 2; i < node.length; i++) {
      if ((node[i] as Keyed).key === key) return node.length === 3 ? null : removeAt(node, i, null);
    }
    return node;
  }
  const bit = 1 << ((hash >>> shift) & 31);
  if ((bitmap & bit) === 0) return node;
  const i = 1 + popcount(bitmap & (bit - 1));
  const child = node[i];
  if (Array.isArray(child)) {
    const next = hDel(child, shift + 5, hash, key);
    if (next === child) return node;
    if (next === null) return bitmap === bit ? null : removeAt(node, i, bitmap ^ bit);
    // One entry left below (a bitmap node with one entry, or a collision node with one): fold it up.
    const lone = next.length === 2 && !Array.isArray(next[1]) ? next[1] : next.length === 3 && next[0] === null ? next[2] : undefined;
    return withAt(node, i, lone ?? next);
  }
  if ((child as Keyed).hash !== hash || (child as Keyed).key !== key) return node;
  return bitmap === bit ? null : removeAt(node, i, bitmap ^ bit);
};

const hForEach = (node: HNode, visit: (entry: Keyed) => void): void => {
  for (let i = node[0] === null ? 2 : 1; i < node.length; i++) {
    const child = node[i];
    if (Array.isArray(child)) hForEach(child, visit);
    else visit(child as Keyed);
  }
};

/**
 * An immutable set of entries, at most one per key, as a hash array mapped
 * trie: lookup, add and delete walk (and copy) a path of about log32(n) small
 * arrays, with no key comparisons on the way. Each entry carries its key and
 * the key's hash (`hashString`, or any 32-bit hash used consistently), so
 * nothing is hashed twice. Unordered (use PMap for key order).
 */
export class KeyedSet<T extends Keyed> {
  private constructor(
    private readonly root: HNode,
    readonly size: number,
  ) {}

  static empty<T extends Keyed>(): KeyedSet<T> {
    return new KeyedSet<T>(EMPTY_ROOT, 0);
  }

  /** The entry for `key`; `hash` must be the hash its entries carry. */
  get(key: string, hash: number): T | undefined {
    return hGet<T>(this.root, hash, key);
  }

  /** Add `entry`, replacing the entry with the same key. */
  put(entry: T): KeyedSet<T> {
    return this.swap(entry).set;
  }

  /** Add `entry`, replacing the entry with the same key; `old` is the one replaced. One walk for both. */
  swap(entry: T): { set: KeyedSet<T>; old: T | undefined } {
    replaced = undefined;
    const root = hPut(this.root, 0, entry);
    const old = replaced as T | undefined;
    replaced = undefined;
    return { set: new KeyedSet<T>(root, old === undefined ? this.size + 1 : this.size), old };
  }

  delete(key: string, hash: number): KeyedSet<T> {
    const root = hDel(this.root, 0, hash, key);
    if (root === this.root) return this;
    return new KeyedSet<T>(root ?? EMPTY_ROOT, this.size - 1);
  }

  /** Entries in no particular order. */
  values(): T[] {
    const out: T[] = [];
    hForEach(this.root, (entry) => out.push(entry as T));
    return out;
  }
}
