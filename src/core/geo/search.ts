/**
 * A whole `_geo` search as pure functions over a read-only index, so any
 * index implementation (the R-tree adapter, a brute-force test double, a
 * shard of a cluster) answers the same way.
 *
 * One shard (easton's search): the best `limit + skip` hits strictly after
 * the shard's bookmark key, in (distance, id) order, among
 * - the entries whose bounding box meets the query's envelope and that pass
 *   the relation; or, with `nearest=true`,
 * - all entries passing the relation, nearest first (easton's
 *   nearestNeighborQuery does not restrict to the envelope).
 * Then the coordinator merges the shards (merge.ts) and advances the
 * bookmark (bookmark.ts); with one shard its hits are already in order and
 * only `skip` is cut.
 *
 * Hot path (every query runs it): candidates go into two flat arrays, ids
 * are read only when distances tie, and nothing is allocated per candidate.
 */
import TinyQueue from "tinyqueue";
import { advanceBookmark, type Bookmark } from "./bookmark.js";
import type { GeoJsonGeometry } from "./geojson.js";
import type { Envelope } from "./indexed-geometry.js";
import { mergeShardHits } from "./merge.js";
import { compareHitKeys, compareIds, type HitKey } from "./order.js";
import type { PreparedGeoQuery } from "./query-geometry.js";
import { pointRelationTest, relationTest, type RelationOperands } from "./relation.js";

/**
 * What the search reads from an index. Entries are integer handles, one per
 * indexed geometry (a doc indexed with several geometries has several).
 */
export interface GeoIndexReader extends RelationOperands {
  /**
   * Calls a visitor once per live entry whose bounding box meets the
   * envelope, boundaries included, in any order: `visitPoint` for entries
   * whose `isPoint` holds, with their position (= centroid), so the search
   * reads nothing else of them; `visitShape` for the others.
   */
  forEachInEnvelope(envelope: Envelope, visitPoint: (entry: number, x: number, y: number) => void, visitShape: (entry: number) => void): void;
  /**
   * Up to `count` live entries for which `accept` holds (all when it is
   * undefined), in ascending planar distance of their centroid from (x, y);
   * equal distances in any order.
   */
  nearestEntries(x: number, y: number, count: number, accept: ((entry: number) => boolean) | undefined): ArrayLike<number>;
  docId(entry: number): string;
  rev(entry: number): string;
  /** The geometry's position among its doc's geometries. */
  ordinal(entry: number): number;
  /** The geometry as returned to clients. */
  geometry(entry: number): GeoJsonGeometry;
}

export interface GeoHit extends HitKey {
  /** The shard (index) it came from: its bookmark entry. */
  readonly shard: string;
  readonly rev: string;
  /** null when `include_geoms=false`. */
  readonly geometry: GeoJsonGeometry | null;
}

export interface GeoShard {
  readonly shard: string;
  readonly reader: GeoIndexReader;
}

export interface GeoPage {
  readonly hits: readonly GeoHit[];
  /** The bookmark after this page (unchanged when the page is empty). */
  readonly bookmark: Bookmark;
}

/** Entries with their distances, in two parallel arrays: ids are only read when distances tie. */
interface Candidates {
  readonly entries: number[];
  readonly distances: number[];
}

/** The chosen candidates (indexes into `candidates`), in result order. */
interface Chosen {
  readonly candidates: Candidates;
  readonly order: readonly number[];
}

/** (distance, id bytes, ordinal) order of candidates a and b (by index), reading ids only on a distance tie, as compareHitKeys. */
function compareCandidates(reader: GeoIndexReader, { entries, distances }: Candidates, a: number, b: number): number {
  const da = distances[a]!;
  const db = distances[b]!;
  if (da !== db) return da < db ? -1 : 1;
  const ea = entries[a]!;
  const eb = entries[b]!;
  return compareIds(reader.docId(ea), reader.docId(eb)) || reader.ordinal(ea) - reader.ordinal(eb);
}

function candidateOrder(reader: GeoIndexReader, candidates: Candidates): (a: number, b: number) => number {
  return (a, b) => compareCandidates(reader, candidates, a, b);
}

/** Below this many candidates an insertion sort (no comparator closure; linear on the nearly sorted kNN lists). */
const INSERTION_SORT_MAX = 32;

/** Indexes 0..count-1 in candidate order. */
function sortedIndexes(reader: GeoIndexReader, candidates: Candidates, count: number): number[] {
  const all = new Array<number>(count);
  for (let i = 0; i < count; i++) all[i] = i;
  return count > INSERTION_SORT_MAX ? all.sort(candidateOrder(reader, candidates)) : insertionSorted(reader, candidates, all);
}

/** `indexes` sorted in place in candidate order (stable, as Array.prototype.sort). */
function insertionSorted(reader: GeoIndexReader, candidates: Candidates, indexes: number[]): number[] {
  for (let i = 1; i < indexes.length; i++) {
    const item = indexes[i]!;
    let j = i - 1;
    while (j >= 0 && compareCandidates(reader, candidates, indexes[j]!, item) > 0) {
      indexes[j + 1] = indexes[j]!;
      j--;
    }
    indexes[j + 1] = item;
  }
  return indexes;
}

/** Strictly after the bookmark key; the id is read only when the distance ties. */
function isAfterKey(reader: GeoIndexReader, entry: number, distance: number, after: HitKey): boolean {
  if (distance !== after.distance) return distance > after.distance;
  return compareHitKeys({ distance, id: reader.docId(entry), ordinal: reader.ordinal(entry) }, after) > 0;
}

/** Distances of a query's candidates, sorted natively to find its cut-off; grown as needed, reused (searches do not nest). */
let distanceScratch = new Float64Array(256);

/**
 * Indexes of the `need` best candidates, in order: a full sort when few;
 * when more, only those no farther than the `need`-th smallest distance
 * (found by a native sort of the distances) are compared in full, ties at
 * the cut-off included, so the first `need` are exactly the full sort's;
 * a bounded max-heap when many.
 */
function best(reader: GeoIndexReader, candidates: Candidates, need: number): number[] {
  const count = candidates.entries.length;
  if (count <= INSERTION_SORT_MAX || count <= need) {
    const all = sortedIndexes(reader, candidates, count);
    if (all.length > need) all.length = need;
    return all;
  }
  if (count <= need * 4 + 64) {
    const { distances } = candidates;
    if (distanceScratch.length < count) distanceScratch = new Float64Array(Math.max(count, distanceScratch.length * 2));
    const sorted = distanceScratch.subarray(0, count);
    for (let i = 0; i < count; i++) sorted[i] = distances[i]!;
    sorted.sort();
    const cutOff = sorted[need - 1]!;
    if (!Number.isNaN(cutOff)) {
      const within: number[] = [];
      for (let i = 0; i < count; i++) if (distances[i]! <= cutOff) within.push(i);
      const order = within.length <= INSERTION_SORT_MAX ? insertionSorted(reader, candidates, within) : within.sort(candidateOrder(reader, candidates));
      if (order.length > need) order.length = need;
      return order;
    }
    const all = sortedIndexes(reader, candidates, count);
    all.length = need;
    return all;
  }
  const order = candidateOrder(reader, candidates);
  const worstFirst = new TinyQueue<number>([], (a, b) => order(b, a));
  for (let i = 0; i < count; i++) {
    if (worstFirst.length < need) worstFirst.push(i);
    else if (order(i, worstFirst.peek()!) < 0) {
      worstFirst.pop();
      worstFirst.push(i);
    }
  }
  const kept: number[] = [];
  while (worstFirst.length > 0) kept.push(worstFirst.pop()!);
  return kept.reverse();
}

function envelopeSearch(reader: GeoIndexReader, prepared: PreparedGeoQuery, need: number, after: HitKey | undefined): Chosen {
  const passes = relationTest(prepared, reader);
  const pointPasses = pointRelationTest(prepared);
  const { distanceTo, envelopes } = prepared;
  const seen = envelopes.length > 1 ? new Set<number>() : undefined;
  const candidates: Candidates = { entries: [], distances: [] };
  const { entries, distances } = candidates;
  const isNew = (entry: number): boolean => {
    if (seen === undefined) return true;
    if (seen.has(entry)) return false;
    seen.add(entry);
    return true;
  };
  // A point's position comes from the tree that found it: no read of the index's columns.
  const visitPoint = (entry: number, x: number, y: number): void => {
    if (!isNew(entry)) return;
    const distance = distanceTo(x, y);
    if (after !== undefined && !isAfterKey(reader, entry, distance, after)) return;
    if (!pointPasses(x, y)) return;
    entries.push(entry);
    distances.push(distance);
  };
  const visitShape = (entry: number): void => {
    if (!isNew(entry)) return;
    const distance = distanceTo(reader.centroidX(entry), reader.centroidY(entry));
    if (after !== undefined && !isAfterKey(reader, entry, distance, after)) return;
    if (!passes(entry)) return;
    entries.push(entry);
    distances.push(distance);
  };
  for (const envelope of envelopes) reader.forEachInEnvelope(envelope, visitPoint, visitShape);
  return { candidates, order: best(reader, candidates, need) };
}

/**
 * Nearest first: ask the index for `need + 1` accepted entries; if the last
 * of them is not strictly farther than the `need`-th, entries tied with it
 * may be missing, so ask for twice as many (ties must order by id).
 */
function nearestSearch(reader: GeoIndexReader, prepared: PreparedGeoQuery, need: number, after: HitKey | undefined): Chosen {
  const passes = relationTest(prepared, reader);
  const { distanceTo, centroidX, centroidY } = prepared;
  const accept =
    after === undefined && prepared.query.relation === "none"
      ? undefined
      : (entry: number): boolean =>
          (after === undefined || isAfterKey(reader, entry, distanceTo(reader.centroidX(entry), reader.centroidY(entry)), after)) && passes(entry);
  for (let count = need + 1; ; count *= 2) {
    const found = reader.nearestEntries(centroidX, centroidY, count, accept);
    const length = found.length;
    const candidates: Candidates = { entries: new Array<number>(length), distances: new Array<number>(length) };
    for (let i = 0; i < length; i++) {
      const entry = found[i]!;
      candidates.entries[i] = entry;
      candidates.distances[i] = distanceTo(reader.centroidX(entry), reader.centroidY(entry));
    }
    // Already ascending by squared distance (ties in any order): the sort is linear.
    const order = sortedIndexes(reader, candidates, length);
    if (length < count || candidates.distances[order[length - 1]!]! > candidates.distances[order[need - 1]!]!) {
      if (order.length > need) order.length = need;
      return { candidates, order };
    }
  }
}

/** One shard: its best `limit + skip` hits strictly after `after` (its bookmark key), tagged with `shard`. */
export function searchShard(reader: GeoIndexReader, prepared: PreparedGeoQuery, after?: HitKey, shard = "0"): GeoHit[] {
  const { limit, skip, nearest, includeGeoms } = prepared.query;
  const need = limit + skip;
  if (need <= 0) return [];
  const { candidates, order } = nearest ? nearestSearch(reader, prepared, need, after) : envelopeSearch(reader, prepared, need, after);
  const hits = new Array<GeoHit>(order.length);
  for (let n = 0; n < order.length; n++) {
    const i = order[n]!;
    const entry = candidates.entries[i]!;
    hits[n] = {
      shard,
      distance: candidates.distances[i]!,
      id: reader.docId(entry),
      ordinal: reader.ordinal(entry),
      rev: reader.rev(entry),
      geometry: includeGeoms ? reader.geometry(entry) : null,
    };
  }
  return hits;
}

/** The whole query over shards: each shard's best, merged, skipped, and the bookmark advanced. */
export function runGeoSearch(shards: readonly GeoShard[], prepared: PreparedGeoQuery): GeoPage {
  const { limit, skip, bookmark } = prepared.query;
  const results = shards.map(({ shard, reader }) => searchShard(reader, prepared, bookmark.get(shard), shard));
  // One shard's hits are in (distance, id, ordinal) order already: the merge would only cut them.
  const hits = results.length === 1 ? results[0]!.slice(skip, skip + limit) : mergeShardHits(results, limit, skip);
  return { hits, bookmark: advanceBookmark(bookmark, hits) };
}
