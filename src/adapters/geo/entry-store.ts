/**
 * The entries of one geo index, one per indexed geometry, as columns
 * (typed arrays grown by doubling) so a million points cost ~60 bytes each
 * and no object per point. A doc's entries are contiguous (they are added
 * together by one upsert), so a doc record holds its first entry and count,
 * and an entry's ordinal is its offset from the first.
 *
 * Entries are never reused: removing marks them dead; `compacted()` copies
 * the live ones into a fresh store, renumbered in order (the index rebuilds
 * its trees from it).
 */
import type { GeoJsonGeometry, GeometryFacts, JstsGeometry } from "../../core/geo/index.js";

export interface DocRecord {
  readonly id: string;
  readonly rev: string;
  /** First entry handle; updated when the store is compacted. */
  first: number;
  readonly count: number;
  /** Bytes of this doc's record in the snapshot / log model. */
  readonly bytes: number;
}

/** What a non-point (or more-than-2D point) entry keeps besides its columns. */
export interface StoredShape {
  /** As returned to clients (trimmed to the index's dimensions). */
  readonly geometry: GeoJsonGeometry;
  /** Built on first use by a relation (or at indexing, then kept). */
  jsts: JstsGeometry | undefined;
}

/** Entry flag bits (searches filter on them: see packed-tree.ts). */
export const LIVE = 1;
export const POINT = 2;
const COLLECTION = 4;

const grownFloat64 = (array: Float64Array, capacity: number): Float64Array => {
  const grown = new Float64Array(capacity);
  grown.set(array);
  return grown;
};

function scatterFloat64(from: Float64Array, into: Float64Array, moved: Int32Array): void {
  for (let entry = 0; entry < moved.length; entry++) into[moved[entry]!] = from[entry]!;
}

export class EntryStore {
  count = 0;
  liveCount = 0;
  minX: Float64Array;
  minY: Float64Array;
  maxX: Float64Array;
  maxY: Float64Array;
  centroidX: Float64Array;
  centroidY: Float64Array;
  /** Per entry: LIVE | POINT | COLLECTION bits. Replaced when the store grows: read it per search. */
  flags: Uint8Array;
  readonly docOf: DocRecord[] = [];
  readonly shapes: (StoredShape | undefined)[] = [];

  constructor(capacity = 1024) {
    const size = Math.max(16, capacity);
    this.minX = new Float64Array(size);
    this.minY = new Float64Array(size);
    this.maxX = new Float64Array(size);
    this.maxY = new Float64Array(size);
    this.centroidX = new Float64Array(size);
    this.centroidY = new Float64Array(size);
    this.flags = new Uint8Array(size);
  }

  private ensureCapacity(needed: number): void {
    if (needed <= this.flags.length) return;
    const capacity = Math.max(needed, this.flags.length * 2);
    this.minX = grownFloat64(this.minX, capacity);
    this.minY = grownFloat64(this.minY, capacity);
    this.maxX = grownFloat64(this.maxX, capacity);
    this.maxY = grownFloat64(this.maxY, capacity);
    this.centroidX = grownFloat64(this.centroidX, capacity);
    this.centroidY = grownFloat64(this.centroidY, capacity);
    const flags = new Uint8Array(capacity);
    flags.set(this.flags);
    this.flags = flags;
  }

  /** Appends a live entry; returns its handle. `shape` is undefined for a plain 2D point. */
  add(facts: GeometryFacts, doc: DocRecord, shape: StoredShape | undefined): number {
    const entry = this.count++;
    this.ensureCapacity(this.count);
    this.minX[entry] = facts.minX;
    this.minY[entry] = facts.minY;
    this.maxX[entry] = facts.maxX;
    this.maxY[entry] = facts.maxY;
    this.centroidX[entry] = facts.centroidX;
    this.centroidY[entry] = facts.centroidY;
    this.flags[entry] = LIVE | (facts.isPoint ? POINT : 0) | (facts.isCollection ? COLLECTION : 0);
    this.docOf[entry] = doc;
    this.shapes[entry] = shape;
    this.liveCount++;
    return entry;
  }

  kill(entry: number): void {
    if ((this.flags[entry]! & LIVE) === 0) return;
    this.flags[entry] = this.flags[entry]! & ~LIVE;
    this.shapes[entry] = undefined;
    this.liveCount--;
  }

  isLive(entry: number): boolean {
    return (this.flags[entry]! & LIVE) !== 0;
  }

  isPoint(entry: number): boolean {
    return (this.flags[entry]! & POINT) !== 0;
  }

  isCollection(entry: number): boolean {
    return (this.flags[entry]! & COLLECTION) !== 0;
  }

  /** Per entry, the first entry of its doc: read in order, comparing doc records without reading them. */
  docStarts(): Int32Array {
    const starts = new Int32Array(this.count);
    for (let entry = 1; entry < this.count; entry++) starts[entry] = this.docOf[entry] === this.docOf[entry - 1] ? starts[entry - 1]! : entry;
    return starts;
  }

  /**
   * A dense store's entries copied into a new store in `order` (every entry
   * once, each doc's entries together and in their own order), and where
   * each entry went; doc records point at their new first entry. The index
   * puts them in its tree's spatial order, so that the entries one query
   * reads share cache lines.
   */
  permuted(order: ArrayLike<number>): { readonly store: EntryStore; readonly moved: Int32Array } {
    if (order.length !== this.count || this.liveCount !== this.count) throw new Error("permuted() takes a dense store and every entry once");
    const count = this.count;
    const next = new EntryStore(count);
    const moved = new Int32Array(count);
    for (let to = 0; to < count; to++) moved[order[to]!] = to;
    // Column by column, read in order and scattered: stores do not stall as scattered loads would.
    scatterFloat64(this.minX, next.minX, moved);
    scatterFloat64(this.minY, next.minY, moved);
    scatterFloat64(this.maxX, next.maxX, moved);
    scatterFloat64(this.maxY, next.maxY, moved);
    scatterFloat64(this.centroidX, next.centroidX, moved);
    scatterFloat64(this.centroidY, next.centroidY, moved);
    for (let entry = 0; entry < count; entry++) next.flags[moved[entry]!] = this.flags[entry]!;
    // The object columns are filled in order (a JS array written out of order would leave fast mode).
    for (let to = 0; to < count; to++) {
      const entry = order[to]!;
      const doc = this.docOf[entry]!;
      next.docOf.push(doc);
      next.shapes.push(this.shapes[entry]);
      if (to === 0 || next.docOf[to - 1] !== doc) doc.first = to;
    }
    next.count = next.liveCount = count;
    return { store: next, moved };
  }

  /** The live entries copied in order into a new store; doc records point at their new first entry. */
  compacted(): EntryStore {
    const next = new EntryStore(this.liveCount);
    let previousDoc: DocRecord | undefined;
    for (let entry = 0; entry < this.count; entry++) {
      if (!this.isLive(entry)) continue;
      const doc = this.docOf[entry]!;
      const moved = next.count++;
      next.minX[moved] = this.minX[entry]!;
      next.minY[moved] = this.minY[entry]!;
      next.maxX[moved] = this.maxX[entry]!;
      next.maxY[moved] = this.maxY[entry]!;
      next.centroidX[moved] = this.centroidX[entry]!;
      next.centroidY[moved] = this.centroidY[entry]!;
      next.flags[moved] = this.flags[entry]!;
      next.docOf[moved] = doc;
      next.shapes[moved] = this.shapes[entry];
      // A doc's entries are contiguous and live or dead together: its first live one is its first.
      if (doc !== previousDoc) doc.first = moved;
      previousDoc = doc;
    }
    next.liveCount = next.count;
    return next;
  }
}
