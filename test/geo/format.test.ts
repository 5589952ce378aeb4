import { describe, expect, it } from "vitest";
import { isLeft } from "fp-ts/lib/Either.js";
import { GeoIndex } from "../../src/adapters/geo/index.js";
import { decodeBookmark, formatGeoResponse, parseGeoRequest, type JsonObject, type PreparedGeoQuery } from "../../src/core/geo/index.js";

const index = new GeoIndex();
index.upsert("near", "1-n", [{ type: "Point", coordinates: [1, 1] }]);
index.upsert("far", "2-f", [{ type: "LineString", coordinates: [[3, 3], [5, 5]] }]);

const docs: Record<string, JsonObject> = {
  near: { _id: "near", _rev: "1-n", type: "Landmark", properties: { name: "a" }, other: 1 },
  far: { _id: "far", _rev: "2-f", other: 2 },
};

function respond(qs: string, withDocs = true): JsonObject {
  const parsed = parseGeoRequest(new URLSearchParams(qs));
  if (isLeft(parsed)) throw new Error(parsed.left.reason);
  const q: PreparedGeoQuery = parsed.right;
  return formatGeoResponse(index.search(q), q.query, withDocs ? (id) => docs[id] : undefined);
}

const keysOf = (o: unknown): string[] => Object.keys(o as object);

describe("view", () => {
  it("{bookmark, rows: [{id, rev, geometry}]}", () => {
    const body = respond("bbox=0,0,1,1");
    expect(keysOf(body)).toEqual(["bookmark", "rows"]);
    expect(body["rows"]).toEqual([{ id: "near", rev: "1-n", geometry: { type: "Point", coordinates: [1, 1] } }]);
    expect(decodeBookmark(body["bookmark"] as string)?.get("0")).toMatchObject({ id: "near", ordinal: 0 });
  });

  it("include_docs: {id, geometry, doc}; include_geoms=false: geometry null", () => {
    const body = respond("bbox=0,0,5,5&include_docs=true&include_geoms=false");
    expect(body["rows"]).toEqual([
      { id: "far", geometry: null, doc: docs["far"] },
      { id: "near", geometry: null, doc: docs["near"] },
    ]);
    expect(keysOf((body["rows"] as JsonObject[])[0])).toEqual(["id", "geometry", "doc"]);
  });

  it("a doc gone since it was indexed is null", () => {
    const parsed = parseGeoRequest(new URLSearchParams("bbox=0,0,1,1&include_docs=true"));
    if (isLeft(parsed)) throw new Error(parsed.left.reason);
    expect(formatGeoResponse(index.search(parsed.right), parsed.right.query, () => undefined)["rows"]).toEqual([
      { id: "near", geometry: { type: "Point", coordinates: [1, 1] }, doc: null },
    ]);
  });
});

describe("geojson (and application/vnd.geo+json)", () => {
  it("{bookmark, type, features: [{_id, geometry, type: Feature, properties: []}]}", () => {
    const body = respond("bbox=0,0,1,1&format=geojson", false);
    expect(keysOf(body)).toEqual(["bookmark", "type", "features"]);
    expect(body["type"]).toBe("FeatureCollection");
    expect(body["features"]).toEqual([{ _id: "near", geometry: { type: "Point", coordinates: [1, 1] }, type: "Feature", properties: [] }]);
    expect(keysOf((body["features"] as JsonObject[])[0])).toEqual(["_id", "geometry", "type", "properties"]);
  });

  it("include_docs: _rev, the doc's type (else Feature) and properties (else [])", () => {
    const body = respond("bbox=0,0,5,5&format=application/vnd.geo%2Bjson&include_docs=true");
    expect(body["features"]).toEqual([
      { _id: "far", geometry: { type: "LineString", coordinates: [[3, 3], [5, 5]] }, _rev: "2-f", type: "Feature", properties: [] },
      { _id: "near", geometry: { type: "Point", coordinates: [1, 1] }, _rev: "1-n", type: "Landmark", properties: { name: "a" } },
    ]);
  });
});

describe("legacy", () => {
  it("{type, features: [{id}], bookmark}", () => {
    const body = respond("bbox=0,0,1,1&format=legacy", false);
    expect(keysOf(body)).toEqual(["type", "features", "bookmark"]);
    expect(body["features"]).toEqual([{ id: "near" }]);
  });

  it("include_docs: id, type Feature unless the doc has one, then the doc without _id and _rev", () => {
    const body = respond("bbox=0,0,5,5&format=legacy&include_docs=true");
    expect(body["features"]).toEqual([
      { id: "far", type: "Feature", other: 2 },
      { id: "near", type: "Landmark", properties: { name: "a" }, other: 1 },
    ]);
    expect(keysOf((body["features"] as JsonObject[])[0])).toEqual(["id", "type", "other"]);
  });
});
