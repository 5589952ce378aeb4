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
import { relationTest, type RelationOperands } from "./relation.js";

/**
 * What the search reads from an index. Entries are integer handles, one per
 * indexed geometry (a doc indexed with several geometries has several).
 */
export interface GeoIndexReader extends RelationOperands {
  /** Calls `visit` once per live entry whose bounding box meets the envelope, boundaries included, in any order. */
  forEachInEnvelope(envelope: Envelope, visit: (entry: number) => void): void;
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

/** (distance, id bytes, ordinal) order of two candidates (by index), reading ids only on a distance tie. */
function candidateOrder(reader: GeoIndexReader, { entries, distances }: Candidates): (a: number, b: number) => number {
  return (a, b) => {
    const d = distances[a]! - distances[b]!;
    if (d !== 0) return d;
    const ea = entries[a]!;
    const eb = entries[b]!;
    return compareIds(reader.docId(ea), reader.docId(eb)) || reader.ordinal(ea) - reader.ordinal(eb);
  };
}

/** Strictly after the bookmark key; the id is read only when the distance ties. */
function isAfterKey(reader: GeoIndexReader, entry: number, distance: number, after: HitKey): boolean {
  if (distance !== after.distance) return distance > after.distance;
  return compareHitKeys({ distance, id: reader.docId(entry), ordinal: reader.ordinal(entry) }, after) > 0;
}

/** Indexes of the `need` best candidates, in order: a full sort when few, a bounded max-heap when many. */
function best(reader: GeoIndexReader, candidates: Candidates, need: number): number[] {
  const order = candidateOrder(reader, candidates);
  const count = candidates.entries.length;
  const all = new Array<number>(count);
  for (let i = 0; i < count; i++) all[i] = i;
  if (count <= need * 4 + 64) {
    all.sort(order);
    if (all.length > need) all.length = need;
    return all;
  }
  const worstFirst = new TinyQueue<number>([], (a, b) => order(b, a));
  for (const i of all) {
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

function envelopeSearch(reader: GeoIndexReader, prepared: PreparedGeoQuery, need: number, after: HitKey | undefined): Candidates {
  const passes = relationTest(prepared, reader);
  const { distanceTo, envelopes } = prepared;
  const seen = envelopes.length > 1 ? new Set<number>() : undefined;
  const candidates: Candidates = { entries: [], distances: [] };
  for (const envelope of envelopes) {
    reader.forEachInEnvelope(envelope, (entry) => {
      if (seen !== undefined) {
        if (seen.has(entry)) return;
        seen.add(entry);
      }
      const distance = distanceTo(reader.centroidX(entry), reader.centroidY(entry));
      if (after !== undefined && !isAfterKey(reader, entry, distance, after)) return;
      if (!passes(entry)) return;
      candidates.entries.push(entry);
      candidates.distances.push(distance);
    });
  }
  return pick(candidates, best(reader, candidates, need));
}

const pick = ({ entries, distances }: Candidates, indexes: readonly number[]): Candidates => ({
  entries: indexes.map((i) => entries[i]!),
  distances: indexes.map((i) => distances[i]!),
});

/**
 * Nearest first: ask the index for `need + 1` accepted entries; if the last
 * of them is not strictly farther than the `need`-th, entries tied with it
 * may be missing, so ask for twice as many (ties must order by id).
 */
function nearestSearch(reader: GeoIndexReader, prepared: PreparedGeoQuery, need: number, after: HitKey | undefined): Candidates {
  const passes = relationTest(prepared, reader);
  const { distanceTo, centroidX, centroidY } = prepared;
  const distanceOf = (entry: number): number => distanceTo(reader.centroidX(entry), reader.centroidY(entry));
  const accept =
    after === undefined && prepared.query.relation === "none"
      ? undefined
      : (entry: number): boolean => (after === undefined || isAfterKey(reader, entry, distanceOf(entry), after)) && passes(entry);
  for (let count = need + 1; ; count *= 2) {
    const found = reader.nearestEntries(centroidX, centroidY, count, accept);
    const candidates: Candidates = { entries: Array.from(found), distances: Array.from(found, distanceOf) };
    const order = best(reader, candidates, found.length);
    if (found.length < count) return pick(candidates, order.slice(0, need));
    const farthest = candidates.distances[order[order.length - 1]!]!;
    if (farthest > candidates.distances[order[need - 1]!]!) return pick(candidates, order.slice(0, need));
  }
}

/** One shard: its best `limit + skip` hits strictly after `after` (its bookmark key), tagged with `shard`. */
export function searchShard(reader: GeoIndexReader, prepared: PreparedGeoQuery, after?: HitKey, shard = "0"): GeoHit[] {
  const { limit, skip, nearest, includeGeoms } = prepared.query;
  const need = limit + skip;
  if (need <= 0) return [];
  const { entries, distances } = nearest ? nearestSearch(reader, prepared, need, after) : envelopeSearch(reader, prepared, need, after);
  return entries.map((entry, i) => ({
    shard,
    distance: distances[i]!,
    id: reader.docId(entry),
    ordinal: reader.ordinal(entry),
    rev: reader.rev(entry),
    geometry: includeGeoms ? reader.geometry(entry) : null,
  }));
}

/** The whole query over shards: each shard's best, merged, skipped, and the bookmark advanced. */
export function runGeoSearch(shards: readonly GeoShard[], prepared: PreparedGeoQuery): GeoPage {
  const { limit, skip, bookmark } = prepared.query;
  const results = shards.map(({ shard, reader }) => searchShard(reader, prepared, bookmark.get(shard), shard));
  // One shard's hits are in (distance, id, ordinal) order already: the merge would only cut them.
  const hits = results.length === 1 ? results[0]!.slice(skip, skip + limit) : mergeShardHits(results, limit, skip);
  return { hits, bookmark: advanceBookmark(bookmark, hits) };
}
