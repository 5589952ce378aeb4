/**
 * The spatial trees of one geo index, in two tiers (a log-structured
 * design): a static base of flatbush trees over the entries present at the
 * last rebuild, and a dynamic delta of rbush trees over the entries added
 * since. Flatbush answers a 1x1 degree box over a million points in ~2 us
 * and 10 nearest in ~5 us, several times faster than a dynamic R-tree; the
 * delta stays small (the index rebuilds the base when it grows), so its
 * rbush queries stay cheap.
 *
 * Each tier keeps points and other shapes apart: points need one tree (box
 * = centroid = the point), shapes need their boxes (for envelope queries)
 * and their centroids (distances run between centroids, so nearest-first
 * iteration walks the centroids).
 */
import Flatbush from "flatbush";
import RBush from "rbush";
import knn from "rbush-knn";
import type { Envelope } from "../../core/geo/index.js";
import type { EntryStore } from "./entry-store.js";

/** Entries nearest first, with their squared centroid distance. */
export interface NearestList {
  readonly entries: number[];
  readonly distancesSq: number[];
}

const NODE_SIZE = 16;
const EMPTY_LIST: NearestList = { entries: [], distancesSq: [] };

/** Entry filter for nearest-first iteration; undefined when everything passes. */
export type Accept = ((entry: number) => boolean) | undefined;

function withDistances(entries: number[], x: number, y: number, store: EntryStore): NearestList {
  const distancesSq = entries.map((entry) => {
    const dx = store.centroidX[entry]! - x;
    const dy = store.centroidY[entry]! - y;
    return dx * dx + dy * dy;
  });
  return { entries, distancesSq };
}

/** The first `count` of two nearest-first lists. */
export function mergeNearest(a: NearestList, b: NearestList, count: number): NearestList {
  if (b.entries.length === 0) return a.entries.length <= count ? a : { entries: a.entries.slice(0, count), distancesSq: a.distancesSq.slice(0, count) };
  if (a.entries.length === 0) return mergeNearest(b, EMPTY_LIST, count);
  const entries: number[] = [];
  const distancesSq: number[] = [];
  let i = 0;
  let j = 0;
  while (entries.length < count && (i < a.entries.length || j < b.entries.length)) {
    const takeA = j >= b.entries.length || (i < a.entries.length && a.distancesSq[i]! <= b.distancesSq[j]!);
    if (takeA) {
      entries.push(a.entries[i]!);
      distancesSq.push(a.distancesSq[i++]!);
    } else {
      entries.push(b.entries[j]!);
      distancesSq.push(b.distancesSq[j++]!);
    }
  }
  return { entries, distancesSq };
}

/**
 * The distance bound for the next tier: nothing farther than the list's
 * `count`-th can make the first `count`. Slightly inflated so rounding in
 * sqrt and re-squaring never drops an entry at the bound.
 */
export const boundOf = (list: NearestList, count: number): number =>
  list.entries.length < count ? Infinity : Math.sqrt(list.distancesSq[count - 1]!) * (1 + 1e-9) + 1e-12;

/** A flatbush over some entries (`entries[i]` is the handle of item i). */
class StaticTree {
  private constructor(
    private readonly tree: Flatbush,
    private readonly entries: Int32Array,
  ) {}

  /** Items are `entries[i]`, boxed by the columns (the same columns twice make points). */
  static build(entries: Int32Array, minX: Float64Array, minY: Float64Array, maxX: Float64Array, maxY: Float64Array): StaticTree | undefined {
    if (entries.length === 0) return undefined;
    const tree = new Flatbush(entries.length, NODE_SIZE, Float64Array);
    for (const entry of entries) tree.add(minX[entry]!, minY[entry]!, maxX[entry]!, maxY[entry]!);
    tree.finish();
    return new StaticTree(tree, entries);
  }

  forEachInEnvelope(envelope: Envelope, live: Accept, visit: (entry: number) => void): void {
    const entries = this.entries;
    this.tree.search(envelope.minX, envelope.minY, envelope.maxX, envelope.maxY, (item) => {
      const entry = entries[item]!;
      if (live === undefined || live(entry)) visit(entry);
      return false; // visited already: no result array
    });
  }

  nearest(x: number, y: number, count: number, maxDistance: number, accept: Accept): number[] {
    const entries = this.entries;
    const filter = accept === undefined ? undefined : (item: number) => accept(entries[item]!);
    return this.tree.neighbors(x, y, count, maxDistance, filter).map((item) => entries[item]!);
  }
}

/** The static tier: everything live at the last rebuild, entry handles [0, size). */
export class BaseTier {
  /** Entries of this tier removed since it was built (still in the trees, filtered out). */
  dead = 0;

  private constructor(
    readonly size: number,
    private readonly points: StaticTree | undefined,
    private readonly shapeBoxes: StaticTree | undefined,
    private readonly shapeCentroids: StaticTree | undefined,
  ) {}

  static empty(): BaseTier {
    return new BaseTier(0, undefined, undefined, undefined);
  }

  /** Builds the trees over all entries of a compacted store (all live). */
  static build(store: EntryStore): BaseTier {
    let pointCount = 0;
    for (let entry = 0; entry < store.count; entry++) if (store.isPoint(entry)) pointCount++;
    const points = new Int32Array(pointCount);
    const shapes = new Int32Array(store.count - pointCount);
    for (let entry = 0, p = 0, s = 0; entry < store.count; entry++) {
      if (store.isPoint(entry)) points[p++] = entry;
      else shapes[s++] = entry;
    }
    const { centroidX, centroidY } = store;
    return new BaseTier(
      store.count,
      StaticTree.build(points, centroidX, centroidY, centroidX, centroidY),
      StaticTree.build(shapes, store.minX, store.minY, store.maxX, store.maxY),
      StaticTree.build(shapes, centroidX, centroidY, centroidX, centroidY),
    );
  }

  forEachInEnvelope(envelope: Envelope, store: EntryStore, visit: (entry: number) => void): void {
    const live = this.dead === 0 ? undefined : (entry: number) => store.isLive(entry);
    this.points?.forEachInEnvelope(envelope, live, visit);
    this.shapeBoxes?.forEachInEnvelope(envelope, live, visit);
  }

  nearest(x: number, y: number, count: number, accept: Accept, store: EntryStore): NearestList {
    const filter: Accept =
      this.dead === 0 ? accept : accept === undefined ? (entry) => store.isLive(entry) : (entry) => store.isLive(entry) && accept(entry);
    const points = this.points === undefined ? EMPTY_LIST : withDistances(this.points.nearest(x, y, count, Infinity, filter), x, y, store);
    if (this.shapeCentroids === undefined) return points;
    const shapes = withDistances(this.shapeCentroids.nearest(x, y, count, boundOf(points, count), filter), x, y, store);
    return mergeNearest(points, shapes, count);
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

  forEachInEnvelope(envelope: Envelope, visit: (entry: number) => void): void {
    if (this.items.size === 0) return;
    for (const item of this.points.search(envelope)) visit(item.entry);
    for (const item of this.shapeBoxes.search(envelope)) visit(item.entry);
  }

  nearest(x: number, y: number, count: number, maxDistance: number, accept: Accept, store: EntryStore): NearestList {
    if (this.items.size === 0) return EMPTY_LIST;
    const predicate = accept === undefined ? undefined : (item: DeltaItem) => accept(item.entry);
    // rbush-knn reads a bound of 0 as "no bound": harmless, just slower.
    const bounded = (tree: RBush<DeltaItem>, bound: number): NearestList =>
      withDistances(
        knn(tree, x, y, count, predicate, Number.isFinite(bound) ? bound : undefined).map((item) => item.entry),
        x,
        y,
        store,
      );
    const points = bounded(this.points, maxDistance);
    const shapes = bounded(this.shapeCentroids, Math.min(maxDistance, boundOf(points, count)));
    return mergeNearest(points, shapes, count);
  }
}
