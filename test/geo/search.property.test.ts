/**
 * Properties of the whole search: the R-tree adapter agrees with a brute
 * force reader through any history of upserts and removals; bookmark paging
 * returns exactly the unpaged result; merging shards equals one index;
 * upserts move docs and removals drop them; snapshots round-trip and
 * corrupt ones are refused with GeoSnapshotError.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { GeoIndex, GeoSnapshotError } from "../../src/adapters/geo/index.js";
import {
  encodeBookmark,
  parseGeoRequest,
  runGeoSearch,
  searchShard,
  type GeoHit,
  type GeoIndexReader,
  type GeoJsonGeometry,
  type PreparedGeoQuery,
} from "../../src/core/geo/index.js";
import { docs, operations, queryString, type Operation } from "./support/arbitraries.js";
import { BruteForceReader } from "./support/brute-force-reader.js";

const prepare = (params: string): PreparedGeoQuery => {
  const result = parseGeoRequest(new URLSearchParams(params));
  if (result._tag === "Left") throw new Error(`${params}: ${result.left.reason}`);
  return result.right;
};

const withPaging = (prepared: PreparedGeoQuery, paging: Partial<PreparedGeoQuery["query"]>): PreparedGeoQuery => ({
  ...prepared,
  query: { ...prepared.query, ...paging },
});

/** Everything the query matches (nearest queries too), in order. */
const allHits = (reader: GeoIndexReader, prepared: PreparedGeoQuery): GeoHit[] => searchShard(reader, withPaging(prepared, { limit: 100_000, skip: 0 }));

const keys = (hits: readonly GeoHit[]): string[] => hits.map((h) => `${h.id}#${h.ordinal}@${h.distance}`);

/** Small tiers, so short histories cross rebuilds, tombstones and both trees. */
const smallIndex = (): GeoIndex => new GeoIndex({ minDeltaEntries: 4, maxDeltaEntries: 8 });

interface Target {
  upsert(id: string, rev: string, g: GeoJsonGeometry[]): unknown;
  remove(id: string): unknown;
  flush?(): void;
  compact?(): void;
}

function apply(operationsList: readonly Operation[], ...targets: Target[]): void {
  for (const operation of operationsList) {
    for (const target of targets) {
      if (operation.op === "upsert") target.upsert(operation.id, "1-x", operation.geometries);
      else if (operation.op === "remove") target.remove(operation.id);
      else if (operation.op === "compact") target.compact?.();
      else target.flush?.();
    }
  }
}

describe("GeoIndex vs brute force", () => {
  it("same hits, same order, after any history of upserts and removals", () => {
    fc.assert(
      fc.property(operations, fc.array(queryString, { minLength: 1, maxLength: 5 }), (history, queries) => {
        const index = smallIndex();
        const reference = new BruteForceReader();
        apply(history, index, reference);
        expect(index.entryCount).toBe(reference.size);
        for (const params of queries) {
          const prepared = prepare(params);
          expect(keys(allHits(index, prepared)), params).toEqual(keys(allHits(reference, prepared)));
          const top = withPaging(prepared, { limit: 3 });
          const expectedTop = keys(allHits(reference, prepared)).slice(0, 3);
          expect(keys(index.searchShard(top)), `${params} top 3`).toEqual(expectedTop);
          expect(keys(searchShard(reference, top)), `${params} top 3 (reference)`).toEqual(expectedTop);
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe("compaction", () => {
  it("compact() renumbers the entries in spatial order: same answers and ordinals, before and after further removals and upserts", () => {
    fc.assert(
      fc.property(docs, fc.array(queryString, { minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 1000 }), (docList, queries, seed) => {
        // Docs listed in reverse, so their entries are not in spatial order already.
        const index = new GeoIndex();
        const reference = new BruteForceReader();
        for (const [id, geometries] of [...docList].reverse()) {
          index.upsert(id, "1-x", geometries);
          reference.upsert(id, "1-x", geometries);
        }
        index.compact();
        const check = (): void => {
          expect(index.entryCount).toBe(reference.size);
          for (const params of queries) expect(keys(allHits(index, prepare(params))), params).toEqual(keys(allHits(reference, prepare(params))));
        };
        check();
        docList.forEach(([id, geometries], i) => {
          if ((i + seed) % 3 === 0) {
            index.remove(id);
            reference.remove(id);
          } else if ((i + seed) % 5 === 0) {
            index.upsert(id, "2-x", [...geometries].reverse());
            reference.upsert(id, "2-x", [...geometries].reverse());
          }
        });
        check();
        index.compact();
        check();
      }),
      { numRuns: 100 },
    );
  });
});

describe("ties", () => {
  it("docs at the same place order by id bytes, also across a page or nearest cut", () => {
    const index = smallIndex();
    const ids = ["b", "a\u{1F600}", "a\uFFFD", "a", "ab", "c", "B", "aa", "\u00e9", "a\u0000"];
    for (const id of [...ids].reverse()) index.upsert(id, "1-x", [{ type: "Point", coordinates: [1, 1] }]);
    const byteOrder = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    for (const params of ["g=POINT(0 0)&nearest=true", "bbox=0,0,2,2"]) {
      for (const limit of [1, 2, 3, 5, 10]) {
        const hits = index.search(withPaging(prepare(params), { limit })).hits;
        expect(hits.map((h) => h.id), `${params} limit ${limit}`).toEqual(byteOrder.slice(0, limit));
      }
    }
  });
});

describe("cut-offs", () => {
  it("any limit gives the prefix of the full order, ties at the cut included, however many candidates", () => {
    // A grid: many docs at equal distances from the query's centre, in counts that reach every selection path
    // (an insertion sort, a native sort of the distances then a full compare of those within the cut, a bounded heap).
    const index = smallIndex();
    const reference = new BruteForceReader();
    for (let x = 0; x <= 16; x++) {
      for (let y = 0; y <= 16; y++) {
        const id = `d${(x * 7 + y * 13) % 17}-${x}-${y}`;
        index.upsert(id, "1-x", [{ type: "Point", coordinates: [x, y] }]);
        reference.upsert(id, "1-x", [{ type: "Point", coordinates: [x, y] }]);
      }
    }
    for (const params of ["bbox=4,4,12,12", "bbox=0,0,16,16", "bbox=6,6,10,10", "g=POINT(8 8)&nearest=true", "lon=8&lat=8&radius=400000"]) {
      const full = keys(allHits(reference, prepare(params)));
      for (const limit of [1, 2, 4, 5, 8, 9, 12, 13, 20, 25, 40, 60, 100, 200]) {
        const expected = full.slice(0, limit);
        expect(keys(index.searchShard(withPaging(prepare(params), { limit }))), `${params} limit ${limit}`).toEqual(expected);
        expect(keys(searchShard(reference, withPaging(prepare(params), { limit }))), `${params} limit ${limit} (reference)`).toEqual(expected);
      }
    }
  });
});

describe("paging", () => {
  it("bookmark pages concatenate to the unpaged result, without duplicates; an exhausted query keeps its bookmark", () => {
    fc.assert(
      fc.property(docs, queryString, fc.integer({ min: 1, max: 7 }), (docList, params, pageSize) => {
        const index = smallIndex();
        for (const [id, geometries] of docList) index.upsert(id, "1-x", geometries);
        const prepared = prepare(params);
        const expected = keys(allHits(index, prepared));
        const paged: string[] = [];
        let query = withPaging(prepared, { limit: pageSize, skip: 0 });
        for (let page = 0; page < 200; page++) {
          const result = index.search(query);
          paged.push(...keys(result.hits));
          if (result.hits.length === 0) {
            expect(encodeBookmark(result.bookmark)).toBe(encodeBookmark(query.query.bookmark));
            break;
          }
          query = withPaging(prepared, { limit: pageSize, bookmark: result.bookmark });
        }
        expect(paged).toEqual(expected);
        expect(new Set(paged).size).toBe(paged.length);
      }),
      { numRuns: 150 },
    );
  });

  it("skip drops the first hits of the merged list", () => {
    fc.assert(
      fc.property(docs, queryString, fc.integer({ min: 0, max: 10 }), fc.integer({ min: 1, max: 10 }), (docList, params, skip, limit) => {
        const reference = new BruteForceReader(docList);
        const prepared = prepare(params);
        const expected = keys(allHits(reference, prepared)).slice(skip, skip + limit);
        expect(keys(runGeoSearch([{ shard: "s", reader: reference }], withPaging(prepared, { skip, limit })).hits)).toEqual(expected);
      }),
    );
  });
});

describe("merging shards", () => {
  it("docs spread over shards page exactly as one index", () => {
    fc.assert(
      fc.property(docs, queryString, fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 6 }), fc.nat(), (docList, params, shardCount, pageSize, salt) => {
        const single = new BruteForceReader(docList);
        const shards = Array.from({ length: shardCount }, (_, i) => ({ shard: `shard-${i}`, reader: new BruteForceReader() }));
        docList.forEach(([id, geometries], i) => shards[(i + salt) % shardCount]!.reader.upsert(id, "1-x", geometries));
        const prepared = prepare(params);
        const expected = keys(allHits(single, prepared));
        const merged: string[] = [];
        let query = withPaging(prepared, { limit: pageSize });
        for (let page = 0; page < 200; page++) {
          const result = runGeoSearch(shards, query);
          if (result.hits.length === 0) break;
          merged.push(...keys(result.hits));
          query = withPaging(prepared, { limit: pageSize, bookmark: result.bookmark });
        }
        expect(merged).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });
});

describe("updates", () => {
  const bboxAround = (x: number, y: number): PreparedGeoQuery => prepare(`bbox=${x - 0.1},${y - 0.1},${x + 0.1},${y + 0.1}`);
  const hitIds = (index: GeoIndex, prepared: PreparedGeoQuery): string[] => index.searchShard(withPaging(prepared, { limit: 1000 })).map((h) => h.id);

  it("an upserted doc moves: the old position no longer hits it, the new one does", () => {
    fc.assert(
      fc.property(docs, fc.integer({ min: -40, max: 40 }), fc.integer({ min: -40, max: 40 }), (docList, nx, ny) => {
        const index = smallIndex();
        for (const [id, geometries] of docList) index.upsert(id, "1-x", geometries);
        const [x, y] = [nx / 4 + 20, ny / 4 + 20]; // outside the docs' [-5, 7] world
        index.upsert("mover", "1-a", [{ type: "Point", coordinates: [x, y] }]);
        expect(hitIds(index, bboxAround(x, y))).toContain("mover");
        index.upsert("mover", "2-b", [{ type: "Point", coordinates: [x + 1, y] }]);
        expect(hitIds(index, bboxAround(x, y))).not.toContain("mover");
        const moved = index.searchShard(withPaging(bboxAround(x + 1, y), { limit: 1000 })).filter((h) => h.id === "mover");
        expect(moved.map((h) => h.rev)).toEqual(["2-b"]);
      }),
      { numRuns: 100 },
    );
  });

  it("a removed doc leaves the index", () => {
    fc.assert(
      fc.property(docs.filter((d) => d.length > 0), fc.nat(), (docList, pick) => {
        const index = smallIndex();
        for (const [id, geometries] of docList) index.upsert(id, "1-x", geometries);
        const [id] = docList[pick % docList.length]!;
        expect(index.remove(id)).toBe(true);
        expect(index.remove(id)).toBe(false);
        expect(index.has(id)).toBe(false);
        expect(hitIds(index, prepare("bbox=-180,-90,180,90"))).not.toContain(id);
        expect(index.docCount).toBe(docList.length - 1);
      }),
      { numRuns: 100 },
    );
  });
});

describe("snapshots", () => {
  it("restore(snapshot()) answers every query the same, and snapshots again to the same bytes", () => {
    fc.assert(
      fc.property(operations, fc.array(queryString, { minLength: 1, maxLength: 3 }), (history, queries) => {
        const index = smallIndex();
        apply(history, index);
        const bytes = index.snapshot();
        const restored = GeoIndex.restore(bytes);
        expect(restored.docCount).toBe(index.docCount);
        expect(restored.sizes().dataBytes).toBe(index.sizes().dataBytes);
        expect(restored.snapshot()).toEqual(bytes);
        for (const params of queries) expect(keys(allHits(restored, prepare(params)))).toEqual(keys(allHits(index, prepare(params))));
      }),
      { numRuns: 100 },
    );
  });

  it("corrupt snapshots are refused with GeoSnapshotError, never another error", () => {
    const index = new GeoIndex();
    index.upsert("a", "1-a", [{ type: "Point", coordinates: [1, 2] }]);
    index.upsert("b", "1-b", [{ type: "Polygon", coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] }]);
    const bytes = index.snapshot();
    fc.assert(
      fc.property(
        fc.oneof(
          fc.tuple(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 })).map(([at, xor]) => {
            const copy = bytes.slice();
            copy[at] = copy[at]! ^ xor;
            return copy;
          }),
          fc.nat({ max: bytes.length - 1 }).map((length) => bytes.slice(0, length)),
          fc.uint8Array({ maxLength: 200 }),
        ),
        (corrupt) => {
          expect(() => GeoIndex.restore(corrupt)).toThrow(GeoSnapshotError);
        },
      ),
    );
  });
});
