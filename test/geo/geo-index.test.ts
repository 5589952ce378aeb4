import { describe, expect, it } from "vitest";
import { isLeft } from "fp-ts/lib/Either.js";
import { GeoIndex, GeoSnapshotError } from "../../src/adapters/geo/index.js";
import { parseGeoRequest, type PreparedGeoQuery } from "../../src/core/geo/index.js";

const prepared = (qs: string): PreparedGeoQuery => {
  const r = parseGeoRequest(new URLSearchParams(qs));
  if (isLeft(r)) throw new Error(r.left.reason);
  return r.right;
};

const ids = (index: GeoIndex, qs: string): string[] => index.search(prepared(qs)).hits.map((h) => h.id);

describe("GeoIndex upsert", () => {
  it("a doc with two geometries appears twice", () => {
    const index = new GeoIndex();
    expect(index.upsert("two", "1-a", [{ type: "Point", coordinates: [1, 1] }, { type: "Point", coordinates: [2, 2] }])).toEqual({ _tag: "Right", right: 2 });
    // Equidistant from the bbox's centre: the geometries' order breaks the tie.
    expect(index.search(prepared("bbox=0,0,3,3")).hits.map((h) => [h.id, h.ordinal])).toEqual([
      ["two", 0],
      ["two", 1],
    ]);
    expect(index.search(prepared("bbox=1,1,3.5,3.5")).hits.map((h) => [h.id, h.ordinal])).toEqual([
      ["two", 1],
      ["two", 0],
    ]);
    expect(index.docCount).toBe(1);
    expect(index.entryCount).toBe(2);
  });

  it("no geometry: not (or no longer) in the index", () => {
    const index = new GeoIndex();
    index.upsert("a", "1-a", [{ type: "Point", coordinates: [1, 1] }]);
    expect(index.upsert("a", "2-a", [])).toEqual({ _tag: "Right", right: 0 });
    expect(index.has("a")).toBe(false);
  });

  it("a refused geometry skips the doc with the reason, and takes its old entries out", () => {
    const index = new GeoIndex();
    index.upsert("a", "1-a", [{ type: "Point", coordinates: [1, 1] }]);
    const result = index.upsert("a", "2-a", [{ type: "Point", coordinates: [1, 1] }, { type: "Polygon", coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] }]);
    expect(result).toEqual({ _tag: "Left", left: "geometry 1: invalid GeoJSON geometry: coordinates[0] must be a closed ring (first and last positions equal)" });
    expect(index.has("a")).toBe(false);
    expect(ids(index, "bbox=0,0,2,2")).toEqual([]);
  });

  it("keeps the rev of the indexed revision", () => {
    const index = new GeoIndex();
    index.upsert("a", "1-a", [{ type: "Point", coordinates: [1, 1] }]);
    index.upsert("a", "2-b", [{ type: "Point", coordinates: [1, 1] }]);
    expect(index.revOf("a")).toBe("2-b");
    expect(index.search(prepared("bbox=0,0,2,2")).hits.map((h) => h.rev)).toEqual(["2-b"]);
  });

  it("returns geometries cut to the index's dimensions (2 by default)", () => {
    const flat = new GeoIndex();
    const solid = new GeoIndex({ dimensions: 3 });
    for (const index of [flat, solid]) index.upsert("z", "1-z", [{ type: "LineString", coordinates: [[0, 0, 5, 9], [1, 1, 6, 9]] }]);
    expect(flat.search(prepared("bbox=0,0,1,1")).hits[0]!.geometry).toEqual({ type: "LineString", coordinates: [[0, 0], [1, 1]] });
    expect(solid.search(prepared("bbox=0,0,1,1")).hits[0]!.geometry).toEqual({ type: "LineString", coordinates: [[0, 0, 5], [1, 1, 6]] });
    expect(GeoIndex.restore(solid.snapshot()).dimensions).toBe(3);
  });
});

describe("GeoIndex sizes: an append-only log model", () => {
  it("updates and removals leave garbage until compact()", () => {
    const index = new GeoIndex();
    const empty = index.sizes();
    expect(empty.dataBytes).toBe(0);
    index.upsert("a", "1-a", [{ type: "Point", coordinates: [1, 1] }]);
    const one = index.sizes();
    expect(one.dataBytes).toBeGreaterThan(0);
    expect(one.fileBytes).toBe(empty.fileBytes + one.dataBytes);
    index.upsert("a", "2-a", [{ type: "Point", coordinates: [2, 2] }]);
    expect(index.sizes().dataBytes).toBe(one.dataBytes);
    expect(index.sizes().fileBytes).toBe(empty.fileBytes + 2 * one.dataBytes);
    index.remove("a");
    expect(index.sizes().dataBytes).toBe(0);
    expect(index.sizes().fileBytes).toBeGreaterThan(empty.fileBytes + 2 * one.dataBytes);
    index.compact();
    expect(index.sizes()).toEqual(empty);
  });

  it("dataBytes is the live records' size in the snapshot", () => {
    const index = new GeoIndex();
    index.upsert("a", "1-a", [{ type: "Point", coordinates: [1, 1] }, { type: "LineString", coordinates: [[0, 0], [1, 1]] }]);
    index.upsert("é", "1-b", [{ type: "Point", coordinates: [1, 1, 1] }]);
    index.compact();
    expect(index.snapshot().length).toBe(index.sizes().fileBytes);
  });
});

describe("GeoIndex snapshots", () => {
  it("round-trip docs, revs, geometries and their order", () => {
    const index = new GeoIndex();
    index.upsert("b", "1-b", [{ type: "Point", coordinates: [1, 1] }, { type: "Polygon", coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] }]);
    index.upsert("a", "3-a", [{ type: "MultiPoint", coordinates: [[2, 2]] }]);
    const restored = GeoIndex.restore(index.snapshot());
    expect(restored.search(prepared("bbox=0,0,3,3")).hits).toEqual(index.search(prepared("bbox=0,0,3,3")).hits);
    expect(restored.revOf("a")).toBe("3-a");
  });

  it("refuses what is not a snapshot", () => {
    expect(() => GeoIndex.restore(new Uint8Array())).toThrow(GeoSnapshotError);
    expect(() => GeoIndex.restore(new TextEncoder().encode("UPHGEOIX but not really"))).toThrow(GeoSnapshotError);
    expect(() => GeoIndex.restore("text" as unknown as Uint8Array)).toThrow(GeoSnapshotError);
  });
});

describe("GeoIndex across rebuilds", () => {
  it("finds the same docs before and after compact, with removals in both tiers", () => {
    const index = new GeoIndex({ minDeltaEntries: 16, maxDeltaEntries: 32 });
    for (let i = 0; i < 500; i++) index.upsert(`d${i}`, "1-a", [{ type: "Point", coordinates: [(i % 50) / 5, Math.floor(i / 50)] }]);
    for (let i = 0; i < 500; i += 7) index.remove(`d${i}`);
    const before = index.search(prepared("bbox=0,0,10,10&limit=200")).hits.map((h) => h.id);
    const nearestBefore = ids(index, "g=POINT(5 5)&nearest=true&limit=30");
    index.compact();
    expect(index.search(prepared("bbox=0,0,10,10&limit=200")).hits.map((h) => h.id)).toEqual(before);
    expect(ids(index, "g=POINT(5 5)&nearest=true&limit=30")).toEqual(nearestBefore);
    expect(before).toHaveLength(200);
    expect(before).not.toContain("d7");
  });
});

describe("upholster's extensions end to end", () => {
  it("wrap=true selects across the antimeridian and orders by wrapped distance; the default is hastings' band", () => {
    const index = new GeoIndex();
    index.upsert("east", "1-a", [{ type: "Point", coordinates: [179.5, 0] }]);
    index.upsert("west", "1-a", [{ type: "Point", coordinates: [-178, 0] }]);
    index.upsert("middle", "1-a", [{ type: "Point", coordinates: [0, 0] }]);
    expect(ids(index, "bbox=170,-10,-170,10")).toEqual(["middle"]);
    expect(ids(index, "bbox=170,-10,-170,10&wrap=true")).toEqual(["east", "west"]);
    expect(ids(index, "bbox=170,-10,-170,10&wrap=true&relation=intersects")).toEqual(["east", "west"]);
    const distances = index.search(prepared("bbox=170,-10,-170,10&wrap=true")).hits.map((h) => h.distance);
    expect(distances[0]).toBeCloseTo(0.5, 12);
    expect(distances[1]).toBeCloseTo(2, 12);
  });

  it("geodesic=true: exactly the point docs within the radius, by metres", async () => {
    const { geodesicDistanceM } = await import("../../src/core/geo/index.js");
    const index = new GeoIndex();
    const centre = [10, 60] as const;
    const points: [string, number, number][] = [];
    for (let i = 0; i < 400; i++) {
      const x = centre[0] + ((i * 37) % 41) / 10 - 2;
      const y = centre[1] + ((i * 53) % 23) / 10 - 1.1;
      points.push([`p${i}`, x, y]);
      index.upsert(`p${i}`, "1-a", [{ type: "Point", coordinates: [x, y] }]);
    }
    const radiusM = 80_000;
    const page = index.search(prepared(`lon=${centre[0]}&lat=${centre[1]}&radius=${radiusM}&geodesic=true&limit=200`));
    const expected = points
      .map(([id, x, y]) => [id, geodesicDistanceM(centre[0], centre[1], x, y)] as const)
      .filter(([, d]) => d <= radiusM)
      .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
    expect(page.hits.map((h) => h.id)).toEqual(expected.map(([id]) => id));
    expect(page.hits[0]!.distance).toBeCloseTo(expected[0]![1], 6);
    // hastings' planar ellipse differs at this latitude: it is a different set.
    expect(ids(index, `lon=${centre[0]}&lat=${centre[1]}&radius=${radiusM}&limit=200`)).not.toEqual(expected.map(([id]) => id));
  });
});
