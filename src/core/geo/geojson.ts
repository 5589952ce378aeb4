/**
 * GeoJSON geometries as hastings accepts them from `st_index(geometry)`
 * (easton_geojson:to_wkb/1, then GEOS reading the WKB):
 * - `type` one of Point, LineString, Polygon, MultiPoint, MultiLineString,
 *   MultiPolygon, GeometryCollection; other members are ignored;
 * - positions of 2 to 4 finite numbers, the same count throughout a geometry
 *   (a collection included);
 * - nothing empty: no empty coordinate list, ring, polygon, multi geometry
 *   or collection;
 * - what GEOS refuses when it reads the geometry: a line of one position, a
 *   ring of fewer than 4 positions or not closed.
 * Validity (self-intersections, ring orientation) is not checked, as GEOS
 * does not. The codec is the single source of truth for the type; its
 * failure message is the reason logged for a skipped doc.
 */
import * as t from "io-ts";
import { left, right, type Either } from "fp-ts/lib/Either.js";

export type Position = readonly number[];
export type PointGeometry = { readonly type: "Point"; readonly coordinates: Position };
export type LineStringGeometry = { readonly type: "LineString"; readonly coordinates: readonly Position[] };
export type PolygonGeometry = { readonly type: "Polygon"; readonly coordinates: readonly (readonly Position[])[] };
export type MultiPointGeometry = { readonly type: "MultiPoint"; readonly coordinates: readonly Position[] };
export type MultiLineStringGeometry = { readonly type: "MultiLineString"; readonly coordinates: readonly (readonly Position[])[] };
export type MultiPolygonGeometry = {
  readonly type: "MultiPolygon";
  readonly coordinates: readonly (readonly (readonly Position[])[])[];
};
export type GeometryCollection = { readonly type: "GeometryCollection"; readonly geometries: readonly GeoJsonGeometry[] };
export type GeoJsonGeometry =
  | PointGeometry
  | LineStringGeometry
  | PolygonGeometry
  | MultiPointGeometry
  | MultiLineStringGeometry
  | MultiPolygonGeometry
  | GeometryCollection;
export type GeoJsonType = GeoJsonGeometry["type"];

/** Thrown inside the validator only; turned into a codec failure at its edge. */
class InvalidGeoJson extends Error {}

const fail = (reason: string): never => {
  throw new InvalidGeoJson(reason);
};

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u);

/** Tracks the position size of one geometry, so a mismatch is named where it occurs. */
interface DimensionTracker {
  dimensions: number | undefined;
}

function position(u: unknown, path: string, tracker: DimensionTracker): Position {
  if (!Array.isArray(u) || u.length < 2 || u.length > 4) fail(`${path} must be a position of 2 to 4 numbers`);
  const values = u as unknown[];
  for (const value of values) if (typeof value !== "number" || !Number.isFinite(value)) fail(`${path} must hold finite numbers only`);
  if (tracker.dimensions === undefined) tracker.dimensions = values.length;
  else if (tracker.dimensions !== values.length) fail(`mismatched dimensions: ${path} has ${values.length}, expected ${tracker.dimensions}`);
  return [...(values as number[])];
}

function list(u: unknown, path: string, what: string): readonly unknown[] {
  if (!Array.isArray(u)) fail(`${path} must be an array of ${what}`);
  if ((u as unknown[]).length === 0) fail(`${path} must not be empty`);
  return u as unknown[];
}

const positions = (u: unknown, path: string, tracker: DimensionTracker): Position[] =>
  list(u, path, "positions").map((p, i) => position(p, `${path}[${i}]`, tracker));

function lineString(u: unknown, path: string, tracker: DimensionTracker): Position[] {
  const line = positions(u, path, tracker);
  if (line.length < 2) fail(`${path} must have at least 2 positions`);
  return line;
}

const samePlace = (a: Position, b: Position): boolean => a[0] === b[0] && a[1] === b[1];

function ring(u: unknown, path: string, tracker: DimensionTracker): Position[] {
  const r = positions(u, path, tracker);
  if (r.length < 4) fail(`${path} must be a ring of at least 4 positions`);
  if (!samePlace(r[0]!, r[r.length - 1]!)) fail(`${path} must be a closed ring (first and last positions equal)`);
  return r;
}

const polygon = (u: unknown, path: string, tracker: DimensionTracker): Position[][] =>
  list(u, path, "rings").map((r, i) => ring(r, `${path}[${i}]`, tracker));

const GEOMETRY_TYPES: readonly GeoJsonType[] = [
  "Point",
  "LineString",
  "Polygon",
  "MultiPoint",
  "MultiLineString",
  "MultiPolygon",
  "GeometryCollection",
];

/** A copy holding only `type` and `coordinates`/`geometries`, as easton returns it (rebuilt from WKB). */
function geometry(u: unknown, path: string, tracker: DimensionTracker): GeoJsonGeometry {
  if (!isRecord(u)) return fail(`${path || "geometry"} must be an object`);
  const type = u["type"];
  if (type === undefined) return fail(`${path || "geometry"} has no type`);
  if (typeof type !== "string" || !GEOMETRY_TYPES.includes(type as GeoJsonType)) {
    return fail(`${path || "geometry"} has an unsupported type: ${JSON.stringify(type)}`);
  }
  const at = (member: string): string => (path ? `${path}.${member}` : member);
  const coordinates = u["coordinates"];
  if (type !== "GeometryCollection" && coordinates === undefined) return fail(`${path || type} has no coordinates`);
  switch (type as GeoJsonType) {
    case "Point":
      return { type: "Point", coordinates: position(coordinates, at("coordinates"), tracker) };
    case "LineString":
      return { type: "LineString", coordinates: lineString(coordinates, at("coordinates"), tracker) };
    case "Polygon":
      return { type: "Polygon", coordinates: polygon(coordinates, at("coordinates"), tracker) };
    case "MultiPoint":
      return { type: "MultiPoint", coordinates: positions(coordinates, at("coordinates"), tracker) };
    case "MultiLineString":
      return {
        type: "MultiLineString",
        coordinates: list(coordinates, at("coordinates"), "lines").map((l, i) => lineString(l, `${at("coordinates")}[${i}]`, tracker)),
      };
    case "MultiPolygon":
      return {
        type: "MultiPolygon",
        coordinates: list(coordinates, at("coordinates"), "polygons").map((p, i) => polygon(p, `${at("coordinates")}[${i}]`, tracker)),
      };
    case "GeometryCollection": {
      const members = u["geometries"];
      if (members === undefined) return fail(`${path || type} has no geometries`);
      return {
        type: "GeometryCollection",
        geometries: list(members, at("geometries"), "geometries").map((g, i) => geometry(g, `${at("geometries")}[${i}]`, tracker)),
      };
    }
  }
}

const isGeoJsonGeometry = (u: unknown): u is GeoJsonGeometry => isRecord(u) && GEOMETRY_TYPES.includes(u["type"] as GeoJsonType);

export const GeoJsonGeometryC = new t.Type<GeoJsonGeometry, GeoJsonGeometry, unknown>(
  "GeoJsonGeometry",
  isGeoJsonGeometry,
  (u, c) => {
    try {
      return t.success(geometry(u, "", { dimensions: undefined }));
    } catch (error) {
      if (error instanceof InvalidGeoJson) return t.failure(u, c, error.message);
      // Pathological input (a cyclic structure deep enough to overflow the stack, ...).
      return t.failure(u, c, "geometry could not be read");
    }
  },
  t.identity,
);

/** The geometry (normalized copy) or the reason it is refused. */
export function validateGeoJson(u: unknown): Either<string, GeoJsonGeometry> {
  const decoded = GeoJsonGeometryC.decode(u);
  if (decoded._tag === "Right") return right(decoded.right);
  return left(`invalid GeoJSON geometry: ${decoded.left[0]?.message ?? "not a geometry"}`);
}

/** The number of values per position (2, 3 or 4); validated geometries are consistent. */
export function positionSize(g: GeoJsonGeometry): number {
  switch (g.type) {
    case "Point":
      return g.coordinates.length;
    case "LineString":
    case "MultiPoint":
      return g.coordinates[0]!.length;
    case "Polygon":
    case "MultiLineString":
      return g.coordinates[0]![0]!.length;
    case "MultiPolygon":
      return g.coordinates[0]![0]![0]!.length;
    case "GeometryCollection":
      return positionSize(g.geometries[0]!);
  }
}

/**
 * The geometry with positions cut to `dimensions` values, as easton writes
 * it back (its WKB writer's output dimension is the index's, 2 by default).
 */
export function trimDimensions(g: GeoJsonGeometry, dimensions: number): GeoJsonGeometry {
  if (positionSize(g) <= dimensions) return g;
  const cut = (p: Position): Position => p.slice(0, dimensions);
  switch (g.type) {
    case "Point":
      return { type: g.type, coordinates: cut(g.coordinates) };
    case "LineString":
    case "MultiPoint":
      return { type: g.type, coordinates: g.coordinates.map(cut) };
    case "Polygon":
    case "MultiLineString":
      return { type: g.type, coordinates: g.coordinates.map((r) => r.map(cut)) };
    case "MultiPolygon":
      return { type: g.type, coordinates: g.coordinates.map((p) => p.map((r) => r.map(cut))) };
    case "GeometryCollection":
      return { type: g.type, geometries: g.geometries.map((m) => trimDimensions(m, dimensions)) };
  }
}
