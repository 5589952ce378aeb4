/**
 * One geo index (one `st_indexes` entry of one database shard): the mutable
 * spatial structure the pure core searches through `GeoIndexReader`.
 *
 * - `upsert(docId, rev, geometries)`: the doc's geometries (what its index
 *   function passed to `st_index`, in call order) replace its old ones; a
 *   doc with two geometries has two entries and can appear twice in
 *   results, as in hastings. No geometry = not in the index. A geometry
 *   that fails validation skips the doc (its old entries go too) and the
 *   reason comes back for the log.
 * - `remove(docId)`, `docCount`, `entryCount`.
 * - `search(prepared)` -> one page (this index as the only shard);
 *   `searchShard(prepared, after)` for a coordinator over several.
 * - `sizes()` -> `dataBytes` (live records) and `fileBytes` (an append-only
 *   log model: every upsert appends its record, every removal a tombstone,
 *   so updates leave garbage until `compact()`), for the compaction daemon.
 * - `snapshot()` / `GeoIndex.restore(bytes)` (snapshot.ts).
 *
 * Cost: points keep raw coordinates only (no jsts object); jsts geometries
 * of other shapes are built on their first relation check and kept. Trees
 * (tiers.ts) are brought up to date lazily, by the next search or by
 * `flush()`: an upsert only validates and appends, so bulk indexing costs a
 * few microseconds a doc and one tree build at the end. Entries added since
 * the last build go to the dynamic tier, unless it would then outgrow an
 * eighth of the static one (at most 65,536 entries) or removals pile up:
 * then the static tier is rebuilt (synchronously; ~0.3 s per million
 * entries), as by `compact()`, which also renumbers the entries in spatial
 * order for memory locality (about twice as long).
 */
import { left, right, type Either } from "fp-ts/lib/Either.js";
import {
  geometryFacts,
  jstsOf,
  runGeoSearch,
  searchShard,
  trimDimensions,
  validateGeoJson,
  type Envelope,
  type GeoHit,
  type GeoIndexReader,
  type GeoJsonGeometry,
  type GeoPage,
  type GeometryFacts,
  type HitKey,
  type JstsGeometry,
  type PreparedGeoQuery,
} from "../../core/geo/index.js";
import { EntryStore, type DocRecord, type StoredShape } from "./entry-store.js";
import {
  docHeaderBytes,
  GeoSnapshotError,
  geoJsonRecordBytes,
  POINT_2D_BYTES,
  SNAPSHOT_OVERHEAD_BYTES,
  SnapshotReader,
  SnapshotWriter,
  TAG_GEOJSON,
  TAG_POINT_2D,
  utf8Length,
} from "./snapshot.js";
import { BaseTier, boundSqOf, DeltaTier, mergeNearest } from "./tiers.js";

export type GeoDimensions = 2 | 3 | 4;

export interface GeoIndexOptions {
  /** The index definition's `dimensions`: ordinates kept in returned geometries (2 by default, as easton). */
  readonly dimensions?: GeoDimensions;
  /** The dynamic tier may hold at least this many entries before a rebuild (default 1,024). */
  readonly minDeltaEntries?: number;
  /** ... and at most this many (default 65,536). */
  readonly maxDeltaEntries?: number;
}

export interface GeoIndexSizes {
  /** Bytes of the live records (a compacted file would hold this plus a small header). */
  readonly dataBytes: number;
  /** Bytes of the append-only log model: live records plus garbage since the last compaction. */
  readonly fileBytes: number;
}

/** A validated geometry ready to store. */
interface IndexedGeometry {
  readonly facts: GeometryFacts;
  /** undefined for a plain 2D point. */
  readonly shape: StoredShape | undefined;
  readonly bytes: number;
}

const TOMBSTONE_OVERHEAD_BYTES = 8;

export class GeoIndex implements GeoIndexReader {
  readonly dimensions: GeoDimensions;
  private store = new EntryStore();
  private base = BaseTier.empty();
  private delta = new DeltaTier();
  private readonly docs = new Map<string, DocRecord>();
  private dataBytes = 0;
  private fileBytes = SNAPSHOT_OVERHEAD_BYTES;
  /** Entries [0, indexedUpTo) are in the trees; later ones wait for `flush()`. */
  private indexedUpTo = 0;
  private readonly minDeltaEntries: number;
  private readonly maxDeltaEntries: number;

  constructor(options: GeoIndexOptions = {}) {
    this.dimensions = options.dimensions ?? 2;
    this.minDeltaEntries = options.minDeltaEntries ?? 1024;
    this.maxDeltaEntries = options.maxDeltaEntries ?? 65_536;
  }

  get docCount(): number {
    return this.docs.size;
  }

  get entryCount(): number {
    return this.store.liveCount;
  }

  has(docId: string): boolean {
    return this.docs.has(docId);
  }

  /** The rev indexed for a doc, if it is in the index. */
  revOf(docId: string): string | undefined {
    return this.docs.get(docId)?.rev;
  }

  sizes(): GeoIndexSizes {
    return { dataBytes: this.dataBytes, fileBytes: this.fileBytes };
  }

  /** Replaces the doc's geometries; Right(number of entries), or Left(reason) when a geometry is refused (the doc leaves the index). */
  upsert(docId: string, rev: string, geometries: readonly unknown[]): Either<string, number> {
    const prepared: IndexedGeometry[] = [];
    for (const [i, raw] of geometries.entries()) {
      const indexed = this.prepareGeometry(raw);
      if (indexed._tag === "Left") {
        this.remove(docId);
        return left(geometries.length > 1 ? `geometry ${i}: ${indexed.left}` : indexed.left);
      }
      prepared.push(indexed.right);
    }
    this.removeEntries(docId);
    if (prepared.length === 0) return right(0);
    const bytes = docHeaderBytes(docId, rev) + prepared.reduce((sum, g) => sum + g.bytes, 0);
    this.addDoc({ id: docId, rev, first: this.store.count, count: prepared.length, bytes }, prepared);
    this.fileBytes += bytes;
    this.boundGarbage();
    return right(prepared.length);
  }

  /** Takes the doc out of the index; false if it was not in it. */
  remove(docId: string): boolean {
    if (!this.removeEntries(docId)) return false;
    this.fileBytes += TOMBSTONE_OVERHEAD_BYTES + utf8Length(docId);
    this.boundGarbage();
    return true;
  }

  /** Brings the trees up to date with every upsert and removal (searches do it themselves). */
  flush(): void {
    if (this.indexedUpTo === this.store.count && !this.tooManyDead()) return;
    const pending = this.store.count - this.indexedUpTo;
    if (this.delta.size + pending > this.deltaLimit() || this.tooManyDead()) {
      this.rebuild();
      return;
    }
    for (let entry = this.indexedUpTo; entry < this.store.count; entry++) if (this.store.isLive(entry)) this.delta.add(entry, this.store);
    this.indexedUpTo = this.store.count;
  }

  /**
   * Rebuilds the trees from the live entries, renumbered in the trees'
   * spatial order (see `rebuild`), and drops the log's garbage.
   */
  compact(): void {
    this.rebuild(true);
    this.fileBytes = SNAPSHOT_OVERHEAD_BYTES + this.dataBytes;
  }

  /** This index as the only shard (shard key `shard`): one page and the next bookmark. */
  search(prepared: PreparedGeoQuery, shard = "0"): GeoPage {
    this.flush();
    return runGeoSearch([{ shard, reader: this }], prepared);
  }

  /** This index's best `limit + skip` hits after `after`, tagged `shard`, for a coordinator merging shards. */
  searchShard(prepared: PreparedGeoQuery, after?: HitKey, shard = "0"): GeoHit[] {
    this.flush();
    return searchShard(this, prepared, after, shard);
  }

  snapshot(): Uint8Array {
    const writer = new SnapshotWriter(this.dimensions, this.docs.size);
    const { store } = this;
    let previous: DocRecord | undefined;
    for (let entry = 0; entry < store.count; entry++) {
      if (!store.isLive(entry)) continue;
      const doc = store.docOf[entry]!;
      if (doc !== previous) {
        writer.text(doc.id);
        writer.text(doc.rev);
        writer.u32(doc.count);
        previous = doc;
      }
      const shape = store.shapes[entry];
      if (shape === undefined) {
        writer.u8(TAG_POINT_2D);
        writer.f64(store.centroidX[entry]!);
        writer.f64(store.centroidY[entry]!);
      } else {
        writer.u8(TAG_GEOJSON);
        writer.text(JSON.stringify(shape.geometry));
      }
    }
    return writer.finish();
  }

  /** An index from `snapshot()` bytes; throws GeoSnapshotError on anything corrupt. */
  static restore(bytes: Uint8Array, options: Omit<GeoIndexOptions, "dimensions"> = {}): GeoIndex {
    try {
      return GeoIndex.read(new SnapshotReader(bytes), options);
    } catch (error) {
      if (error instanceof GeoSnapshotError) throw error;
      throw new GeoSnapshotError((error as Error).message ?? String(error));
    }
  }

  private static read(reader: SnapshotReader, options: Omit<GeoIndexOptions, "dimensions">): GeoIndex {
    const index = new GeoIndex({ ...options, dimensions: reader.dimensions as GeoDimensions });
    for (let d = 0; d < reader.docCount; d++) {
      const id = reader.text();
      const rev = reader.text();
      const count = reader.u32();
      if (count === 0) throw new GeoSnapshotError(`doc ${JSON.stringify(id)} has no geometry`);
      if (index.docs.has(id)) throw new GeoSnapshotError(`duplicate doc ${JSON.stringify(id)}`);
      const geometries: IndexedGeometry[] = [];
      for (let g = 0; g < count; g++) geometries.push(index.readGeometry(reader, id));
      const bytes = docHeaderBytes(id, rev) + geometries.reduce((sum, g) => sum + g.bytes, 0);
      index.addDoc({ id, rev, first: index.store.count, count, bytes }, geometries);
    }
    reader.assertAtEnd();
    index.rebuild();
    index.fileBytes = SNAPSHOT_OVERHEAD_BYTES + index.dataBytes;
    return index;
  }

  private readGeometry(reader: SnapshotReader, id: string): IndexedGeometry {
    const tag = reader.u8();
    let raw: unknown;
    if (tag === TAG_POINT_2D) raw = { type: "Point", coordinates: [reader.f64(), reader.f64()] };
    else if (tag === TAG_GEOJSON) {
      try {
        raw = JSON.parse(reader.text());
      } catch (error) {
        if (error instanceof GeoSnapshotError) throw error;
        throw new GeoSnapshotError(`doc ${JSON.stringify(id)}: geometry is not JSON`);
      }
    } else throw new GeoSnapshotError(`doc ${JSON.stringify(id)}: unknown geometry tag ${tag}`);
    const indexed = this.prepareGeometry(raw);
    if (indexed._tag === "Left") throw new GeoSnapshotError(`doc ${JSON.stringify(id)}: ${indexed.left}`);
    return indexed.right;
  }

  // --- GeoIndexReader (for the core's search) ---

  forEachInEnvelope(envelope: Envelope, visitPoint: (entry: number, x: number, y: number) => void, visitShape: (entry: number) => void): void {
    this.flush();
    this.base.forEachInEnvelope(envelope, this.store, visitPoint, visitShape);
    this.delta.forEachInEnvelope(envelope, visitPoint, visitShape);
  }

  nearestEntries(x: number, y: number, count: number, accept?: (entry: number) => boolean): ArrayLike<number> {
    this.flush();
    const fromBase = this.base.nearest(x, y, count, accept, this.store);
    const fromDelta = this.delta.nearest(x, y, count, boundSqOf(fromBase, count), accept, this.store);
    return mergeNearest(fromBase, fromDelta, count).entries;
  }

  envelopeOf(entry: number): Envelope {
    const { store } = this;
    return { minX: store.minX[entry]!, minY: store.minY[entry]!, maxX: store.maxX[entry]!, maxY: store.maxY[entry]! };
  }

  docId(entry: number): string {
    return this.store.docOf[entry]!.id;
  }

  rev(entry: number): string {
    return this.store.docOf[entry]!.rev;
  }

  ordinal(entry: number): number {
    return entry - this.store.docOf[entry]!.first;
  }

  centroidX(entry: number): number {
    return this.store.centroidX[entry]!;
  }

  centroidY(entry: number): number {
    return this.store.centroidY[entry]!;
  }

  isPoint(entry: number): boolean {
    return this.store.isPoint(entry);
  }

  isCollection(entry: number): boolean {
    return this.store.isCollection(entry);
  }

  jsts(entry: number): JstsGeometry {
    const shape = this.store.shapes[entry];
    if (shape === undefined) throw new Error(`entry ${entry} is a plain point: it has no jsts geometry`);
    shape.jsts ??= jstsOf(shape.geometry);
    return shape.jsts;
  }

  geometry(entry: number): GeoJsonGeometry {
    const shape = this.store.shapes[entry];
    return shape !== undefined ? shape.geometry : { type: "Point", coordinates: [this.store.centroidX[entry]!, this.store.centroidY[entry]!] };
  }

  // --- internals ---

  private prepareGeometry(raw: unknown): Either<string, IndexedGeometry> {
    const validated = validateGeoJson(raw);
    if (validated._tag === "Left") return validated;
    const geometry = trimDimensions(validated.right, this.dimensions);
    const facts = geometryFacts(geometry);
    if (facts._tag === "Left") return facts;
    if (geometry.type === "Point" && geometry.coordinates.length === 2) return right({ facts: facts.right, shape: undefined, bytes: POINT_2D_BYTES });
    // The jsts geometry is dropped here and rebuilt on the first relation check: most shapes never need it.
    return right({ facts: facts.right, shape: { geometry, jsts: undefined }, bytes: geoJsonRecordBytes(JSON.stringify(geometry)) });
  }

  private addDoc(doc: DocRecord, geometries: readonly IndexedGeometry[]): void {
    for (const g of geometries) this.store.add(g.facts, doc, g.shape);
    this.docs.set(doc.id, doc);
    this.dataBytes += doc.bytes;
  }

  private removeEntries(docId: string): boolean {
    const doc = this.docs.get(docId);
    if (doc === undefined) return false;
    for (let entry = doc.first; entry < doc.first + doc.count; entry++) {
      if (entry < this.base.size) this.base.dead++;
      else if (entry < this.indexedUpTo) this.delta.remove(entry);
      this.store.kill(entry);
    }
    this.docs.delete(docId);
    this.dataBytes -= doc.bytes;
    return true;
  }

  private deltaLimit(): number {
    return Math.min(this.maxDeltaEntries, Math.max(this.minDeltaEntries, this.base.size / 8));
  }

  /** Removed entries still in the static trees (filtered on every query), beyond a quarter of them. */
  private tooManyDead(): boolean {
    return this.base.dead > Math.max(this.minDeltaEntries, this.base.size / 4);
  }

  /** Dead entries cost memory until a rebuild: an index updated but never searched must not grow without bound. */
  private boundGarbage(): void {
    const dead = this.store.count - this.store.liveCount;
    if (dead > Math.max(this.minDeltaEntries * 4, this.store.liveCount)) this.rebuild();
  }

  /**
   * New static trees over the live entries. With `spatialOrder` (compact(),
   * the compaction daemon's background work) the entries are also
   * renumbered in the centroid tree's Hilbert order, so that the columns and
   * doc records one query reads sit together in memory rather than a cache
   * miss each (10-20% off a query over a million entries); that doubles the
   * rebuild's time, so the rebuilds searches and upserts trigger skip it. A
   * restored index keeps its snapshot's order (it snapshots to the same bytes).
   */
  private rebuild(spatialOrder = false): void {
    // Without removals since the last rebuild the store is already dense.
    if (this.store.liveCount !== this.store.count) this.store = this.store.compacted();
    this.base = BaseTier.build(this.store);
    if (spatialOrder && this.store.count > 1) {
      const { store, moved } = this.store.permuted(this.base.spatialOrder(this.store));
      this.base.remap(moved);
      this.store = store;
    }
    this.delta = new DeltaTier();
    this.indexedUpTo = this.store.count;
  }
}
