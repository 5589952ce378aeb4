/**
 * What an index keeps about one indexed geometry: its bounding box (the
 * R-tree key, as easton's `get_bounds`), its centroid (the origin of every
 * distance) and, for anything but a single point, the jsts geometry for
 * exact relations. A single 2D point needs none of it beyond its position,
 * which is why point docs stay cheap on every path.
 */
import { left, right, type Either } from "fp-ts/lib/Either.js";
import { trimDimensions, type GeoJsonGeometry } from "./geojson.js";
import { centroidOf, geometryFromGeoJson, type JstsGeometry } from "./jsts.js";

export interface Envelope {
  readonly minX: number;
  readonly minY: number;
  readonly maxX: number;
  readonly maxY: number;
}

export interface GeometryFacts extends Envelope {
  readonly centroidX: number;
  readonly centroidY: number;
  /** A single Point: position = centroid = box. */
  readonly isPoint: boolean;
  /** A GeometryCollection: only `intersects`/`disjoint` are defined for it (see relation.ts). */
  readonly isCollection: boolean;
  /** Built for everything but a single point. */
  readonly jsts: JstsGeometry | undefined;
}

export const envelopesMeet = (a: Envelope, b: Envelope): boolean =>
  a.minX <= b.maxX && b.minX <= a.maxX && a.minY <= b.maxY && b.minY <= a.maxY;

export const pointFacts = (x: number, y: number): GeometryFacts => ({
  minX: x,
  minY: y,
  maxX: x,
  maxY: y,
  centroidX: x,
  centroidY: y,
  isPoint: true,
  isCollection: false,
  jsts: undefined,
});

/** Facts of a jsts geometry (a query's or a doc's). */
export function jstsFacts(geometry: JstsGeometry, isCollection: boolean): GeometryFacts {
  const envelope = geometry.getEnvelopeInternal();
  const centroid = centroidOf(geometry);
  return {
    minX: envelope.getMinX(),
    minY: envelope.getMinY(),
    maxX: envelope.getMaxX(),
    maxY: envelope.getMaxY(),
    centroidX: centroid.x,
    centroidY: centroid.y,
    isPoint: false,
    isCollection,
    jsts: geometry,
  };
}

/**
 * Facts of a validated GeoJSON geometry, or why JTS (like GEOS) refuses it.
 * Builds the jsts geometry for non-points; callers may drop `jsts` and
 * rebuild it lazily with `jstsOf` to save memory.
 */
export function geometryFacts(geometry: GeoJsonGeometry): Either<string, GeometryFacts> {
  if (geometry.type === "Point") return right(pointFacts(geometry.coordinates[0]!, geometry.coordinates[1]!));
  let jsts: JstsGeometry;
  try {
    jsts = jstsOf(geometry);
  } catch (error) {
    return left(`invalid geometry: ${(error as Error).message}`);
  }
  const facts = jstsFacts(jsts, geometry.type === "GeometryCollection");
  if (![facts.minX, facts.minY, facts.maxX, facts.maxY, facts.centroidX, facts.centroidY].every(Number.isFinite)) {
    return left("invalid geometry: no finite bounding box or centroid");
  }
  return right(facts);
}

/** The 2D jsts geometry of a validated GeoJSON geometry (relations and centroids are planar in x, y). */
export const jstsOf = (geometry: GeoJsonGeometry): JstsGeometry => geometryFromGeoJson(trimDimensions(geometry, 2));
