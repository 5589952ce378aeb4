/**
 * A small world for the `_geo` HTTP tests: db `places`, design doc
 * `_design/geo` with index `points` (`if (doc.geometry) st_index(doc.geometry)`),
 * points, a line and a polygon around Boston, docs either side of the
 * antimeridian, and docs with no geometry.
 */
import { formatGeoResponse, parseGeoRequest, type JsonObject } from "../../../src/core/geo/index.js";
import type { GeoIndexRef } from "../../../src/ports/geo.js";
import type { TestDoc, TestGeoService } from "../../support/geo-service.js";

export const PLACES: GeoIndexRef = { db: "places", ddoc: "_design/geo", index: "points" };
export const SEARCH_PATH = "/places/_design/geo/_geo/points";
export const INFO_PATH = "/places/_design/geo/_geo_info/points";

const point = (x: number, y: number): JsonObject => ({ type: "Point", coordinates: [x, y] });

export const DOCS: readonly TestDoc[] = [
  { _id: "boston", _rev: "1-a", geometry: point(-71.06, 42.36), type: "Feature", properties: { name: "Boston" } },
  { _id: "cambridge", _rev: "1-b", geometry: point(-71.11, 42.37), properties: { name: "Cambridge" } },
  { _id: "nyc", _rev: "1-c", geometry: point(-74.0, 40.71) },
  { _id: "london", _rev: "1-d", geometry: point(-0.12, 51.5) },
  { _id: "route", _rev: "1-e", geometry: { type: "LineString", coordinates: [[-71.06, 42.36], [-74.0, 40.71]] } },
  {
    _id: "mass",
    _rev: "1-f",
    geometry: { type: "Polygon", coordinates: [[[-72, 42], [-70, 42], [-70, 43], [-72, 43], [-72, 42]]] },
  },
  { _id: "fiji", _rev: "1-g", geometry: point(179.5, -17) },
  { _id: "samoa", _rev: "1-h", geometry: point(-179.5, -14) },
  { _id: "nogeo", _rev: "1-i", name: "no geometry" },
];

export function loadPlaces(service: TestGeoService): void {
  service.createDb("places");
  service.createDb("private");
  service.defineIndex(PLACES.db, PLACES.ddoc, PLACES.index);
  service.defineIndex("private", "_design/geo", "points");
  for (const doc of DOCS) service.putDoc("places", doc);
  service.putDoc("private", DOCS[0]!);
}

/** The body the engine itself gives for a query string (and Accept header): what the HTTP answer must equal. */
export function engineBody(service: TestGeoService, query: string, accept?: string): JsonObject {
  const parsed = parseGeoRequest(new URLSearchParams(query), { accept });
  if (parsed._tag === "Left") throw new Error(`${query}: ${parsed.left.reason}`);
  const { format, includeDocs } = parsed.right.query;
  const docs = new Map(DOCS.map((doc) => [doc._id, doc]));
  return formatGeoResponse(service.engineOf(PLACES).search(parsed.right), { format, includeDocs }, (id) => docs.get(id) ?? null);
}
