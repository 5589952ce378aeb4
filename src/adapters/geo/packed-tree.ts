/**
 * A static packed Hilbert R-tree over entry handles. flatbush builds it (its
 * Hilbert sort and bottom-up packing); this file keeps the packed arrays and
 * searches them itself, because the two searches a geo query runs are
 * hotter than flatbush's general ones allow:
 *
 * - `search`: the entries whose box meets a rectangle, each handed to a
 *   visitor, with an entry-flag test (live, point) done in the loop, and a
 *   reusable typed-array stack instead of flatbush's per-call arrays;
 * - `nearest`: the k entries nearest a point by box distance (exact for
 *   points), best-first with pruning: a node or leaf is looked at only if it
 *   could still beat the k-th best found so far, so a 10-nearest query over
 *   a million points expands a handful of nodes (flatbush's `neighbors`
 *   queues every child of every node it opens, ~2.5x slower here).
 *
 * The layout is flatbush 4's (`_boxes`, `_indices`, `_levelBounds`): boxes
 * of all nodes, leaves first, four numbers each; a node's index entry is the
 * position of its first child's box. The leaf level's indices are replaced
 * by the entry handles at build time, so no lookup table is needed later.
 * A tree of points (the centroid tree) keeps its leaves as (x, y) pairs
 * instead of degenerate boxes: half the memory a query walks through.
 */
import Flatbush from "flatbush";

/** What this file reads of a finished flatbush (4.x); checked once at build. */
interface FlatbushLayout {
  readonly _boxes: Float64Array;
  readonly _indices: Uint16Array | Uint32Array;
  readonly _levelBounds: readonly number[];
  readonly nodeSize: number;
  readonly numItems: number;
}

export const NODE_SIZE = 16;

/** Entry flags the searches can require (the entry store's bits). */
export interface FlagFilter {
  readonly flags: Uint8Array;
  /** An entry is visited when `(flags[entry] & mask) === mask`. */
  readonly mask: number;
}

/**
 * k nearest entries, ascending by squared distance (ties in any order).
 * Plain arrays: a query's few results are young-generation objects, where
 * small typed arrays would each take an off-heap buffer.
 */
export interface NearestList {
  readonly entries: readonly number[];
  readonly distancesSq: readonly number[];
  readonly length: number;
}

export const EMPTY_NEAREST: NearestList = { entries: [], distancesSq: [], length: 0 };

export type EntryAccept = ((entry: number) => boolean) | undefined;

/** A search hit: the entry and its box's min corner (the point, in a tree of points). */
export type LeafVisitor = (entry: number, minX: number, minY: number) => void;

/** A node's box number (position / 4, below 2^27) and its level (< 16) share one int32. */
const LEVEL_BITS = 4;
const LEVEL_MASK = (1 << LEVEL_BITS) - 1;
const pack = (position: number, level: number): number => ((position >> 2) << LEVEL_BITS) | level;
const positionOf = (packed: number): number => (packed >>> LEVEL_BITS) << 2;

export class PackedTree {
  /** DFS stack of `search` (position << LEVEL_BITS | level), reused: searches never nest on one tree. */
  private stack: Int32Array;
  /** `nearest`'s heaps, reused by every call that does not nest in another (an `accept` could search again). */
  private readonly open = new MinHeap(64);
  private readonly best = new MaxHeap(16);
  private nearestBusy = false;

  private constructor(
    /** The boxes from position `boxBase` on: all of them, or a tree of points' node boxes only. */
    private readonly boxes: Float64Array,
    private readonly boxBase: number,
    /** A tree of points: its leaves as (x, y) pairs, half the bytes of their boxes (a leaf at position p is at p / 2). */
    private readonly leafPoints: Float64Array | undefined,
    /** Leaf level: entry handles; node levels: the position of the first child's box. */
    private readonly links: Int32Array,
    /** End (exclusive) of each level's boxes, leaves first. */
    private readonly levelEnds: Int32Array,
    private readonly leafEnd: number,
    private readonly rootPos: number,
  ) {
    this.stack = new Int32Array(levelEnds.length * NODE_SIZE + 16);
  }

  get size(): number {
    return this.leafEnd >> 2;
  }

  /**
   * A tree over `entries`, item i boxed by the columns at `entries[i]`;
   * undefined when there are none. With `points` (every box a point: min =
   * max) the leaves keep only their points: a query reads half the memory.
   */
  static build(
    entries: Int32Array,
    minX: Float64Array,
    minY: Float64Array,
    maxX: Float64Array,
    maxY: Float64Array,
    points = false,
  ): PackedTree | undefined {
    if (entries.length === 0) return undefined;
    const tree = new Flatbush(entries.length, NODE_SIZE, Float64Array);
    for (const entry of entries) tree.add(minX[entry]!, minY[entry]!, maxX[entry]!, maxY[entry]!);
    tree.finish();
    const layout = tree as unknown as FlatbushLayout;
    if (!(layout._boxes instanceof Float64Array) || layout.nodeSize !== NODE_SIZE || layout.numItems !== entries.length) {
      throw new Error("flatbush's packed layout is not the one this tree reads (flatbush 4.x)");
    }
    if (layout._levelBounds.length > LEVEL_MASK || layout._boxes.length / 4 >= 2 ** (31 - LEVEL_BITS)) throw new Error(`too many entries for one tree: ${entries.length}`);
    const leafEnd = entries.length * 4;
    const links = Int32Array.from(layout._indices);
    for (let item = 0; item < entries.length; item++) links[item] = entries[links[item]!]!;
    const boxes = layout._boxes;
    const levelEnds = Int32Array.from(layout._levelBounds);
    const rootPos = boxes.length - 4;
    if (!points) return new PackedTree(boxes, 0, undefined, links, levelEnds, leafEnd, rootPos);
    const leafPoints = new Float64Array(entries.length * 2);
    for (let item = 0; item < entries.length; item++) {
      if (boxes[item * 4] !== boxes[item * 4 + 2] || boxes[item * 4 + 1] !== boxes[item * 4 + 3]) throw new Error("a tree of points was given a box");
      leafPoints[item * 2] = boxes[item * 4]!;
      leafPoints[item * 2 + 1] = boxes[item * 4 + 1]!;
    }
    return new PackedTree(boxes.slice(leafEnd), leafEnd, leafPoints, links, levelEnds, leafEnd, rootPos);
  }

  /**
   * Calls `visit` for every entry whose box meets the rectangle, boundaries
   * included, and whose flags hold every bit of `mask` (all entries when
   * `flags` is undefined), with its box's min corner: in a tree of points,
   * the point itself, read from the leaf the search is already on.
   */
  search(minX: number, minY: number, maxX: number, maxY: number, flags: Uint8Array | undefined, mask: number, visit: LeafVisitor): void {
    const { boxes, boxBase, leafPoints, links, levelEnds, leafEnd } = this;
    let stack = this.stack;
    let top = 0;
    stack[top++] = pack(this.rootPos, levelEnds.length - 1);
    while (top > 0) {
      const packed = stack[--top]!;
      const nodePos = positionOf(packed);
      const level = packed & LEVEL_MASK;
      const end = Math.min(nodePos + NODE_SIZE * 4, levelEnds[level]!);
      const leaves = nodePos < leafEnd;
      if (leaves && leafPoints !== undefined) {
        for (let pos = nodePos; pos < end; pos += 4) {
          const x = leafPoints[pos >> 1]!;
          const y = leafPoints[(pos >> 1) + 1]!;
          if (maxX < x || maxY < y || minX > x || minY > y) continue;
          const link = links[pos >> 2]!;
          if (flags === undefined || (flags[link]! & mask) === mask) visit(link, x, y);
        }
        continue;
      }
      for (let pos = nodePos; pos < end; pos += 4) {
        const box = pos - boxBase;
        if (maxX < boxes[box]! || maxY < boxes[box + 1]! || minX > boxes[box + 2]! || minY > boxes[box + 3]!) continue;
        const link = links[pos >> 2]!;
        if (leaves) {
          if (flags === undefined || (flags[link]! & mask) === mask) visit(link, boxes[box]!, boxes[box + 1]!);
        } else {
          if (top >= stack.length) stack = this.growStack();
          stack[top++] = pack(link, level - 1);
        }
      }
    }
  }

  /**
   * Up to `count` entries passing `filter` and `accept`, nearest to (x, y)
   * by squared box distance and no farther than `maxDistanceSq`, ascending.
   * `accept` is asked only of entries that would make the list.
   */
  nearest(x: number, y: number, count: number, maxDistanceSq: number, filter: FlagFilter | undefined, accept: EntryAccept): NearestList {
    const k = Math.min(count, this.size);
    if (k <= 0) return EMPTY_NEAREST;
    if (this.nearestBusy) return this.nearestWith(new MinHeap(64), new MaxHeap(k), x, y, k, maxDistanceSq, filter, accept);
    this.nearestBusy = true;
    try {
      this.open.length = 0;
      this.best.reset(k);
      return this.nearestWith(this.open, this.best, x, y, k, maxDistanceSq, filter, accept);
    } finally {
      this.nearestBusy = false;
    }
  }

  private nearestWith(
    open: MinHeap,
    best: MaxHeap,
    x: number,
    y: number,
    k: number,
    maxDistanceSq: number,
    filter: FlagFilter | undefined,
    accept: EntryAccept,
  ): NearestList {
    const { boxes, boxBase, leafPoints, links, levelEnds, leafEnd } = this;
    const flags = filter?.flags;
    const mask = filter?.mask ?? 0;
    open.push(this.rootPos, levelEnds.length - 1, 0);
    while (open.length > 0) {
      const nodeDistanceSq = open.topDistance();
      if (nodeDistanceSq > maxDistanceSq || (best.length === k && nodeDistanceSq >= best.topDistance())) break;
      const nodePos = open.topPosition();
      const level = open.topLevel();
      open.pop();
      const end = Math.min(nodePos + NODE_SIZE * 4, levelEnds[level]!);
      const leaves = nodePos < leafEnd;
      const points = leaves && leafPoints !== undefined;
      for (let pos = nodePos; pos < end; pos += 4) {
        // A point's box is (x, y, x, y): the same expressions, read from the leaf's point.
        let dx: number;
        let dy: number;
        if (points) {
          const px = leafPoints[pos >> 1]!;
          const py = leafPoints[(pos >> 1) + 1]!;
          dx = Math.max(px - x, x - px, 0);
          dy = Math.max(py - y, y - py, 0);
        } else {
          const box = pos - boxBase;
          dx = Math.max(boxes[box]! - x, x - boxes[box + 2]!, 0);
          dy = Math.max(boxes[box + 1]! - y, y - boxes[box + 3]!, 0);
        }
        const distanceSq = dx * dx + dy * dy;
        if (distanceSq > maxDistanceSq || (best.length === k && distanceSq >= best.topDistance())) continue;
        const link = links[pos >> 2]!;
        if (!leaves) open.push(link, level - 1, distanceSq);
        else if ((flags === undefined || (flags[link]! & mask) === mask) && (accept === undefined || accept(link))) best.offer(link, distanceSq);
      }
    }
    return best.drainAscending();
  }

  /** The entries in leaf order (the tree's spatial order). */
  leafEntries(): Int32Array {
    return this.links.slice(0, this.size);
  }

  /** Renumbers the entries the leaves point at: entry e becomes `moved[e]`. */
  remap(moved: Int32Array): void {
    for (let item = 0; item < this.size; item++) this.links[item] = moved[this.links[item]!]!;
  }

  private growStack(): Int32Array {
    const grown = new Int32Array(this.stack.length * 2);
    grown.set(this.stack);
    this.stack = grown;
    return grown;
  }
}

/** The nodes still to open, nearest first. */
class MinHeap {
  private distances: Float64Array;
  private nodes: Int32Array;
  length = 0;

  constructor(capacity: number) {
    this.distances = new Float64Array(capacity);
    this.nodes = new Int32Array(capacity);
  }

  topDistance(): number {
    return this.distances[0]!;
  }

  topPosition(): number {
    return positionOf(this.nodes[0]!);
  }

  topLevel(): number {
    return this.nodes[0]! & LEVEL_MASK;
  }

  push(position: number, level: number, distance: number): void {
    if (this.length === this.nodes.length) this.grow();
    let i = this.length++;
    const node = pack(position, level);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.distances[parent]! <= distance) break;
      this.distances[i] = this.distances[parent]!;
      this.nodes[i] = this.nodes[parent]!;
      i = parent;
    }
    this.distances[i] = distance;
    this.nodes[i] = node;
  }

  pop(): void {
    const last = --this.length;
    if (last === 0) return;
    const distance = this.distances[last]!;
    const node = this.nodes[last]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= last) break;
      if (child + 1 < last && this.distances[child + 1]! < this.distances[child]!) child++;
      if (this.distances[child]! >= distance) break;
      this.distances[i] = this.distances[child]!;
      this.nodes[i] = this.nodes[child]!;
      i = child;
    }
    this.distances[i] = distance;
    this.nodes[i] = node;
  }

  private grow(): void {
    const distances = new Float64Array(this.distances.length * 2);
    distances.set(this.distances);
    const nodes = new Int32Array(this.nodes.length * 2);
    nodes.set(this.nodes);
    this.distances = distances;
    this.nodes = nodes;
  }
}

/** The best `capacity` entries so far, the worst on top (replaced by anything nearer). */
class MaxHeap {
  private distances: Float64Array;
  private entries: Int32Array;
  private capacity: number;
  length = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.distances = new Float64Array(capacity);
    this.entries = new Int32Array(capacity);
  }

  /** Empty, for up to `capacity` entries. */
  reset(capacity: number): void {
    this.length = 0;
    this.capacity = capacity;
    if (capacity <= this.entries.length) return;
    this.distances = new Float64Array(capacity);
    this.entries = new Int32Array(capacity);
  }

  topDistance(): number {
    return this.distances[0]!;
  }

  offer(entry: number, distance: number): void {
    if (this.length < this.capacity) {
      let i = this.length++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.distances[parent]! >= distance) break;
        this.distances[i] = this.distances[parent]!;
        this.entries[i] = this.entries[parent]!;
        i = parent;
      }
      this.distances[i] = distance;
      this.entries[i] = entry;
      return;
    }
    if (distance >= this.distances[0]!) return;
    this.siftDown(0, entry, distance, this.length);
  }

  /** Empties the heap into ascending order. */
  drainAscending(): NearestList {
    const length = this.length;
    const entries = new Array<number>(length);
    const distancesSq = new Array<number>(length);
    for (let size = length; size > 0; size--) {
      entries[size - 1] = this.entries[0]!;
      distancesSq[size - 1] = this.distances[0]!;
      const last = size - 1;
      if (last > 0) this.siftDown(0, this.entries[last]!, this.distances[last]!, last);
    }
    this.length = 0;
    return { entries, distancesSq, length };
  }

  private siftDown(start: number, entry: number, distance: number, size: number): void {
    let i = start;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && this.distances[child + 1]! > this.distances[child]!) child++;
      if (this.distances[child]! <= distance) break;
      this.distances[i] = this.distances[child]!;
      this.entries[i] = this.entries[child]!;
      i = child;
    }
    this.distances[i] = distance;
    this.entries[i] = entry;
  }
}
