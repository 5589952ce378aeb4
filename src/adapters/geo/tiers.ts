/**
 * The spatial trees of one geo index, in two tiers (a log-structured
 * design): a static base of packed Hilbert R-trees (packed-tree.ts) over the
 * entries present at the last rebuild, and a dynamic delta of rbush trees
 * over the entries added since. The static trees answer a 1x1 degree box
 * over a million points in ~2 us and 10 nearest in ~2 us; the delta stays
 * small (the index rebuilds the base when it grows), so its rbush queries
 * stay cheap.
 *
 * The base keeps two trees: every entry's centroid (points: the point),
 * which serves nearest-first queries in one walk and envelope queries for
 * points; and the boxes of the other shapes, for their envelope queries.
 * Entries removed since the base was built stay in its trees, filtered by
 * their LIVE flag.
 */
import RBush from "rbush";
import knn from "rbush-knn";
import type { Envelope } from "../../core/geo/index.js";
import { LIVE, POINT, type EntryStore } from "./entry-store.js";
import { EMPTY_NEAREST, PackedTree, type EntryAccept, type FlagFilter, type NearestList } from "./packed-tree.js";

export type { NearestList, EntryAccept } from "./packed-tree.js";

/** A point entry found by an envelope search, with its position. */
export type PointVisitor = (entry: number, x: number, y: number) => void;
export type ShapeVisitor = (entry: number) => void;
export { EMPTY_NEAREST } from "./packed-tree.js";

/** The first `count` of two nearest-first lists. */
export function mergeNearest(a: NearestList, b: NearestList, count: number): NearestList {
  if (b.length === 0 && a.length <= count) return a;
  if (a.length === 0 && b.length <= count) return b;
  const length = Math.min(count, a.length + b.length);
  const entries = new Array<number>(length);
  const distancesSq = new Array<number>(length);
  let i = 0;
  let j = 0;
  for (let n = 0; n < length; n++) {
    const takeA = j >= b.length || (i < a.length && a.distancesSq[i]! <= b.distancesSq[j]!);
    if (takeA) {
      entries[n] = a.entries[i]!;
      distancesSq[n] = a.distancesSq[i++]!;
    } else {
      entries[n] = b.entries[j]!;
      distancesSq[n] = b.distancesSq[j++]!;
    }
  }
  return { entries, distancesSq, length };
}

/** The squared distance bound for the next tier: nothing farther than the list's `count`-th can make the first `count`. */
export const boundSqOf = (list: NearestList, count: number): number => (list.length < count ? Infinity : list.distancesSq[count - 1]!);

/** The static tier: everything live at the last rebuild, entry handles [0, size). */
export class BaseTier {
  /** Entries of this tier removed since it was built (still in the trees, filtered out). */
  dead = 0;

  private constructor(
    readonly size: number,
    private readonly centroids: PackedTree | undefined,
    private readonly shapeBoxes: PackedTree | undefined,
  ) {}

  static empty(): BaseTier {
    return new BaseTier(0, undefined, undefined);
  }

  /** Builds the trees over all entries of a compacted store (all live). */
  static build(store: EntryStore): BaseTier {
    const all = new Int32Array(store.count);
    let shapeCount = 0;
    for (let entry = 0; entry < store.count; entry++) {
      all[entry] = entry;
      if (!store.isPoint(entry)) shapeCount++;
    }
    const shapes = new Int32Array(shapeCount);
    for (let entry = 0, s = 0; entry < store.count; entry++) if (!store.isPoint(entry)) shapes[s++] = entry;
    const { centroidX, centroidY } = store;
    return new BaseTier(
      store.count,
      PackedTree.build(all, centroidX, centroidY, centroidX, centroidY, true),
      PackedTree.build(shapes, store.minX, store.minY, store.maxX, store.maxY),
    );
  }

  /** Points from the centroid tree (its leaves hold their positions), other shapes from the box tree. */
  /**
   * Every entry of the (dense) store in the centroid tree's leaf order,
   * Hilbert order by flatbush's packing, each doc's entries together (where
   * its first one falls): the order to renumber the store in.
   */
  spatialOrder(store: EntryStore): Int32Array {
    const order = new Int32Array(store.count);
    if (this.centroids === undefined) return order;
    const starts = store.docStarts();
    const placed = new Uint8Array(store.count);
    let next = 0;
    for (const entry of this.centroids.leafEntries()) {
      const start = starts[entry]!;
      if (placed[start] === 1) continue;
      placed[start] = 1;
      for (let e = start; e < store.count && starts[e] === start; e++) order[next++] = e;
    }
    return order;
  }

  /** After the store was renumbered (entry e is now `moved[e]`). */
  remap(moved: Int32Array): void {
    this.centroids?.remap(moved);
    this.shapeBoxes?.remap(moved);
  }

  forEachInEnvelope(envelope: Envelope, store: EntryStore, visitPoint: PointVisitor, visitShape: ShapeVisitor): void {
    const liveMask = this.dead === 0 ? 0 : LIVE;
    const { minX, minY, maxX, maxY } = envelope;
    this.centroids?.search(minX, minY, maxX, maxY, store.flags, POINT | liveMask, visitPoint);
    if (this.shapeBoxes !== undefined) {
      if (liveMask === 0) this.shapeBoxes.search(minX, minY, maxX, maxY, undefined, 0, visitShape);
      else this.shapeBoxes.search(minX, minY, maxX, maxY, store.flags, LIVE, visitShape);
    }
  }

  nearest(x: number, y: number, count: number, accept: EntryAccept, store: EntryStore): NearestList {
    if (this.centroids === undefined) return EMPTY_NEAREST;
    const live: FlagFilter | undefined = this.dead === 0 ? undefined : { flags: store.flags, mask: LIVE };
    return this.centroids.nearest(x, y, count, Infinity, live, accept);
  }
}

interface DeltaItem {
  readonly minX: number;
  readonly minY: number;
  readonly maxX: number;
  readonly maxY: number;
  readonly entry: number;
}

/** The dynamic tier: entries added since the last rebuild (removed ones leave its trees at once). */
export class DeltaTier {
  /** Points: box = centroid, one tree serves both kinds of query. */
  private readonly points = new RBush<DeltaItem>();
  private readonly shapeBoxes = new RBush<DeltaItem>();
  private readonly shapeCentroids = new RBush<DeltaItem>();
  /** entry -> its items (one for a point, box and centroid for a shape). */
  private readonly items = new Map<number, DeltaItem | readonly [DeltaItem, DeltaItem]>();

  get size(): number {
    return this.items.size;
  }

  add(entry: number, store: EntryStore): void {
    const x = store.centroidX[entry]!;
    const y = store.centroidY[entry]!;
    if (store.isPoint(entry)) {
      const item: DeltaItem = { minX: x, minY: y, maxX: x, maxY: y, entry };
      this.points.insert(item);
      this.items.set(entry, item);
      return;
    }
    const box: DeltaItem = { minX: store.minX[entry]!, minY: store.minY[entry]!, maxX: store.maxX[entry]!, maxY: store.maxY[entry]!, entry };
    const centroid: DeltaItem = { minX: x, minY: y, maxX: x, maxY: y, entry };
    this.shapeBoxes.insert(box);
    this.shapeCentroids.insert(centroid);
    this.items.set(entry, [box, centroid]);
  }

  remove(entry: number): void {
    const items = this.items.get(entry);
    if (items === undefined) return;
    if (Array.isArray(items)) {
      this.shapeBoxes.remove(items[0]);
      this.shapeCentroids.remove(items[1]);
    } else this.points.remove(items as DeltaItem);
    this.items.delete(entry);
  }

  forEachInEnvelope(envelope: Envelope, visitPoint: PointVisitor, visitShape: ShapeVisitor): void {
    if (this.items.size === 0) return;
    for (const item of this.points.search(envelope)) visitPoint(item.entry, item.minX, item.minY);
    for (const item of this.shapeBoxes.search(envelope)) visitShape(item.entry);
  }

  /** Nearest first, no farther than `maxDistanceSq`. */
  nearest(x: number, y: number, count: number, maxDistanceSq: number, accept: EntryAccept, store: EntryStore): NearestList {
    if (this.items.size === 0) return EMPTY_NEAREST;
    const predicate = accept === undefined ? undefined : (item: DeltaItem) => accept(item.entry);
    // rbush-knn reads a bound of 0 as "no bound" (harmless, just slower); the bound is inflated a
    // hair so that rounding in sqrt and re-squaring never drops an entry at the bound.
    const bound = Number.isFinite(maxDistanceSq) ? Math.sqrt(maxDistanceSq) * (1 + 1e-9) + 1e-12 : undefined;
    const listOf = (tree: RBush<DeltaItem>, limit: number | undefined): NearestList => {
      const found = knn(tree, x, y, count, predicate, limit);
      const entries = found.map((item) => item.entry);
      const distancesSq = entries.map((entry) => {
        const dx = store.centroidX[entry]! - x;
        const dy = store.centroidY[entry]! - y;
        return dx * dx + dy * dy;
      });
      return { entries, distancesSq, length: entries.length };
    };
    const points = listOf(this.points, bound);
    const pointsBound = boundSqOf(points, count);
    const shapes = listOf(this.shapeCentroids, Number.isFinite(pointsBound) ? Math.min(bound ?? Infinity, Math.sqrt(pointsBound) * (1 + 1e-9) + 1e-12) : bound);
    return mergeNearest(points, shapes, count);
  }
}
