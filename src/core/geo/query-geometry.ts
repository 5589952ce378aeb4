/**
 * The query geometry of a decoded `_geo` query, as easton builds it
 * (`Ctx::geom_from_reader`), with what the search needs around it:
 *
 * - bbox: the envelope of the two corners (any order); the geometry is
 *   GEOS's envelope geometry (a rectangle, or a point when both corners
 *   coincide). A 6/8-number bbox uses its x and y only (upholster's index
 *   is 2D; such a bbox takes no relation anyway).
 * - circle / ellipse: half-widths in degrees from the WGS84 ellipsoid at
 *   azimuth 90 (x) and 0 (y) from the centre, then GEOS's planar
 *   100-vertex ellipse polygon in degrees; a zero radius (both ranges zero)
 *   is the centre point.
 * - WKT: parsed by jsts (keywords in any case). jsts accepts trailing text
 *   and non-finite numbers that GEOS refuses; both are refused here.
 *
 * The jsts geometry of a bbox or an ellipse is built only when a relation
 * needs it: their rings, envelopes and centroids are computed here, bit for
 * bit as jsts computes them (ellipse-ring.ts, jts-centroid.ts). Simple WKT
 * (`POINT`, `POLYGON`) is read by a fast path that falls back to jsts for
 * anything else (wkt-fast.ts).
 *
 * Candidates are the docs whose bounding box meets the query's envelope(s);
 * distances run from the query geometry's centroid. A GeometryCollection
 * takes no relation but `none` (GEOS: "This method does not support
 * GeometryCollection arguments"). Errors are 400 `query_parse_error`.
 */
import { left, right, type Either } from "fp-ts/lib/Either.js";
import { ellipseRing, type EllipseRing } from "./ellipse-ring.js";
import { destination, ellipseHalfWidthsDeg, geodesicDistanceM } from "./geodesic.js";
import { jstsFacts, type Envelope } from "./indexed-geometry.js";
import { rectangleCentroid, shellCentroid } from "./jts-centroid.js";
import {
  envelopeGeometry,
  holeFreeShell,
  multiPolygonGeometry,
  pointGeometry,
  polygonGeometry,
  preparedArea,
  readWkt,
  type JstsGeometry,
  type PreparedArea,
} from "./jsts.js";
import { distanceArea, ellipseArea, indexedArea, rectangleArea, ringArea, type QueryArea } from "./query-area.js";
import { readSimpleWkt } from "./wkt-fast.js";
import { geodesicOrderDistanceM, planarDistanceDeg, wrappedPlanarDistanceDeg } from "./order.js";
import { queryParseError, type GeoQuery, type GeoQueryError, type QueryShape } from "./query-params.js";

export const ELLIPSE_VERTICES = 100;
export const GC_RELATION_REASON = "This method does not support GeometryCollection arguments";

/** `geodesic=true` radius query: point docs are in iff within `radiusM` metres of the centre. */
export interface GeodesicCircle {
  readonly lon: number;
  readonly lat: number;
  readonly radiusM: number;
}

/** hastings' radius/ellipse polygon: the ellipse its vertices lie on (half-widths in degrees). */
export interface QueryEllipse {
  readonly centreX: number;
  readonly centreY: number;
  readonly halfWidthX: number;
  readonly halfWidthY: number;
  readonly vertices: number;
}

export interface PreparedGeoQuery {
  readonly query: GeoQuery;
  /** The query geometry (jsts), the first operand of every relation; built on first read for a bbox or an ellipse. */
  readonly geometry: JstsGeometry;
  /** Docs are candidates when their bounding box meets one of these (two for a wrapped bbox). */
  readonly envelopes: readonly Envelope[];
  readonly centroidX: number;
  readonly centroidY: number;
  /** Distance from the query's centroid to a doc's centroid: degrees (planar), or metres (geodesic). */
  readonly distanceTo: (x: number, y: number) => number;
  /**
   * For an areal query geometry (Polygon, MultiPolygon): the prepared query,
   * built on first call and then shared (point location for point docs,
   * GEOS's prepared predicates for shapes); undefined otherwise.
   */
  readonly area: () => PreparedArea | undefined;
  /** For an areal query: point location and shape verdicts without jsts where they can (query-area.ts); undefined otherwise. */
  readonly queryArea: () => QueryArea | undefined;
  readonly geodesicCircle: GeodesicCircle | undefined;
  /** Set for radius and ellipse queries (not geodesic): lets point docs skip most point-in-polygon tests. */
  readonly ellipse: QueryEllipse | undefined;
}

interface ShapeGeometry {
  /** The jsts geometry now, or how to build it (then `envelopes` and `centroid` must be given). */
  readonly geometry: JstsGeometry | (() => JstsGeometry);
  /** A bbox's rectangle or hastings' ellipse: located without jsts. */
  readonly rectangle?: Envelope;
  readonly ellipseRing?: EllipseRing;
  /** Defaults to the geometry's envelope. */
  readonly envelopes?: readonly Envelope[];
  /** Defaults to the geometry's centroid. */
  readonly centroid?: { readonly x: number; readonly y: number };
  readonly geodesicCircle?: GeodesicCircle;
  readonly ellipse?: QueryEllipse;
}

const LONGITUDE_SPAN = 360;

/** Balanced parentheses that close exactly at the end, or a trailing EMPTY: what GEOS's reader insists on. */
function wktEndsWithGeometry(text: string): boolean {
  const trimmed = text.trim();
  if (/empty$/i.test(trimmed) && !trimmed.includes("(")) return true;
  let depth = 0;
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed[i];
    if (c === "(") depth++;
    else if (c === ")") {
      depth--;
      if (depth < 0) return false;
      if (depth === 0) return i === trimmed.length - 1 || /^\s*$/.test(trimmed.slice(i + 1));
    }
  }
  return false;
}

function wktGeometry(text: string): Either<string, JstsGeometry> {
  let geometry: JstsGeometry;
  try {
    geometry = readWkt(text);
  } catch (error) {
    return left(`Invalid WKT geometry: ${(error as Error).message}`);
  }
  if (geometry.isEmpty()) return left("Invalid empty geometry for get_bounds.");
  if (!wktEndsWithGeometry(text)) return left("Invalid WKT geometry: unexpected text after the geometry");
  if (!geometry.getCoordinates().every((c) => Number.isFinite(c.x) && Number.isFinite(c.y))) {
    return left("Invalid WKT geometry: coordinates must be finite numbers");
  }
  return right(geometry);
}

const envelopeOf = (minX: number, minY: number, maxX: number, maxY: number): Envelope => ({ minX, minY, maxX, maxY });

function bboxGeometry(coordinates: readonly number[], wrap: boolean): ShapeGeometry {
  const half = coordinates.length / 2;
  const [x1, y1, x2, y2] = [coordinates[0]!, coordinates[1]!, coordinates[half]!, coordinates[half + 1]!];
  const minY = Math.min(y1, y2);
  const maxY = Math.max(y1, y2);
  if (wrap && x1 > x2) return wrappedBboxGeometry(x1, x2, minY, maxY);
  const minX = Math.min(x1, x2);
  const maxX = Math.max(x1, x2);
  const envelope = envelopeOf(minX, minY, maxX, maxY);
  const centroid = rectangleCentroid(minX, minY, maxX, maxY);
  // A point or line bbox (zero width or height): jsts makes it and takes its centroid.
  if (!(minX < maxX && minY < maxY) || centroid === undefined) return { geometry: envelopeGeometry(minX, minY, maxX, maxY), envelopes: [envelope] };
  return { geometry: () => envelopeGeometry(minX, minY, maxX, maxY), envelopes: [envelope], centroid, rectangle: envelope };
}

/** `wrap=true`, west > east: west..180 and -180..east, centred across the antimeridian. */
function wrappedBboxGeometry(west: number, east: number, minY: number, maxY: number): ShapeGeometry {
  const parts = [envelopeOf(west, minY, 180, maxY), envelopeOf(-180, minY, east, maxY)].filter((e) => e.minX <= e.maxX);
  // A part of zero width (west = 180 or east = -180) selects candidates but adds no area.
  const areas = parts.filter((e) => e.minX < e.maxX && e.minY < e.maxY).map((e) => envelopeGeometry(e.minX, e.minY, e.maxX, e.maxY));
  const geometry =
    areas.length === 2 ? multiPolygonGeometry(areas) : (areas[0] ?? envelopeGeometry(parts[0]!.minX, minY, parts[0]!.maxX, maxY));
  const rawCentreX = (west + east + LONGITUDE_SPAN) / 2;
  const centreX = rawCentreX > 180 ? rawCentreX - LONGITUDE_SPAN : rawCentreX;
  return { geometry, envelopes: parts, centroid: { x: centreX, y: (minY + maxY) / 2 } };
}

/** Math.min / Math.max over a ring's ordinates, without spreading them (a spread allocates and costs ~3 us a ring). */
function minOf(values: Float64Array): number {
  let min = Infinity;
  for (let i = 0; i < values.length; i++) min = Math.min(min, values[i]!);
  return min;
}

function maxOf(values: Float64Array): number {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) max = Math.max(max, values[i]!);
  return max;
}

function ellipseGeometry(x: number, y: number, rangeXM: number, rangeYM: number): Either<string, ShapeGeometry> {
  if (rangeXM === 0 && rangeYM === 0) return right({ geometry: pointGeometry(x, y) });
  const halfWidths = ellipseHalfWidthsDeg(x, y, rangeXM, rangeYM);
  if (!Number.isFinite(halfWidths.x) || !Number.isFinite(halfWidths.y)) {
    return left(`Invalid centre for a radius or ellipse query: lat ${y} is outside [-90, 90]`);
  }
  const ellipse: QueryEllipse = { centreX: x, centreY: y, halfWidthX: halfWidths.x, halfWidthY: halfWidths.y, vertices: ELLIPSE_VERTICES };
  const ring = ellipseRing(x, y, halfWidths.x, halfWidths.y, ELLIPSE_VERTICES);
  const polygon = (): JstsGeometry => polygonGeometry(Array.from(ring.xs, (rx, i) => [rx, ring.ys[i]!] as const));
  // The ring runs counter-clockwise; without area (degenerate radii) jsts takes the centroid of what it built.
  const centroid = shellCentroid(ring.xs, ring.ys, false);
  if (centroid === undefined) return right({ geometry: polygon(), ellipse });
  const envelope = envelopeOf(minOf(ring.xs), minOf(ring.ys), maxOf(ring.xs), maxOf(ring.ys));
  return right({ geometry: polygon, envelopes: [envelope], centroid, ellipse, ellipseRing: ring });
}

/**
 * `geodesic=true` circle: a 100-vertex polygon of points exactly `radiusM`
 * from the centre (for non-point docs) and an envelope that surely holds
 * the true circle (for point docs, tested by distance). Across the
 * antimeridian the polygon is repeated 360 degrees over; around a pole the
 * envelope reaches the pole over all longitudes.
 */
function geodesicCircleGeometry(lon: number, lat: number, radiusM: number): Either<string, ShapeGeometry> {
  if (Math.abs(lat) > 90) return left(`Invalid centre for a radius query: lat ${lat} is outside [-90, 90]`);
  const circle: GeodesicCircle = { lon, lat, radiusM: Math.abs(radiusM) };
  if (radiusM === 0) return right({ geometry: pointGeometry(lon, lat), geodesicCircle: circle });
  const ring = Array.from({ length: ELLIPSE_VERTICES }, (_, i) => destination(lon, lat, (360 * i) / ELLIPSE_VERTICES, circle.radiusM));
  const closed = [...ring, ring[0]!].map((p) => [p.lon, p.lat] as const);
  const polygon = polygonGeometry(closed);
  const facts = jstsFacts(polygon, false);
  // The true circle bulges past each chord by r(1 - cos(pi/n)) < 0.05% of r; 1% of the half-widths is ample.
  const marginX = (facts.maxX - facts.minX) * 0.01 + 1e-9;
  const marginY = (facts.maxY - facts.minY) * 0.01 + 1e-9;
  const aroundNorthPole = geodesicDistanceM(lon, lat, lon, 90) <= circle.radiusM;
  const aroundSouthPole = geodesicDistanceM(lon, lat, lon, -90) <= circle.radiusM;
  if (aroundNorthPole || aroundSouthPole) {
    const minY = aroundSouthPole ? -90 : facts.minY - marginY;
    const maxY = aroundNorthPole ? 90 : facts.maxY + marginY;
    return right({
      geometry: envelopeGeometry(-180, minY, 180, maxY),
      envelopes: [envelopeOf(-180, minY, 180, maxY)],
      centroid: { x: lon, y: lat },
      geodesicCircle: circle,
    });
  }
  const envelope = envelopeOf(facts.minX - marginX, facts.minY - marginY, facts.maxX + marginX, facts.maxY + marginY);
  const shift = envelope.maxX > 180 ? -LONGITUDE_SPAN : envelope.minX < -180 ? LONGITUDE_SPAN : 0;
  if (shift === 0) return right({ geometry: polygon, envelopes: [envelope], centroid: { x: lon, y: lat }, geodesicCircle: circle });
  const shiftedRing = closed.map(([x, y]) => [x + shift, y] as const);
  return right({
    geometry: multiPolygonGeometry([polygon, polygonGeometry(shiftedRing)]),
    envelopes: [envelope, { ...envelope, minX: envelope.minX + shift, maxX: envelope.maxX + shift }],
    centroid: { x: lon, y: lat },
    geodesicCircle: circle,
  });
}

/**
 * A WKT point (a nearest query's usual geometry): its envelope is the point
 * and its centroid JTS's mean of one point, `(0 + x) / 1` as Centroid sums
 * it, without running jsts' Centroid.
 */
function pointShape(point: JstsGeometry): ShapeGeometry {
  const { x, y } = point.getCoordinates()[0]!;
  return { geometry: point, envelopes: [envelopeOf(x, y, x, y)], centroid: { x: (0 + x) / 1, y: (0 + y) / 1 } };
}

function shapeGeometry(shape: QueryShape, query: GeoQuery): Either<string, ShapeGeometry> {
  switch (shape.kind) {
    case "bbox":
      return right(bboxGeometry(shape.coordinates, query.wrap));
    case "wkt": {
      const simple = readSimpleWkt(shape.wkt);
      if (simple !== undefined) return right(simple.getGeometryType() === "Point" ? pointShape(simple) : { geometry: simple });
      const geometry = wktGeometry(shape.wkt);
      return geometry._tag === "Left" ? geometry : right({ geometry: geometry.right });
    }
    case "circle":
      return query.geodesic
        ? geodesicCircleGeometry(shape.x, shape.y, shape.radiusM)
        : ellipseGeometry(shape.x, shape.y, shape.radiusM, shape.radiusM);
    case "ellipse":
      return ellipseGeometry(shape.x, shape.y, shape.rangeXM, shape.rangeYM);
  }
}

function distanceFunction(query: GeoQuery, centroidX: number, centroidY: number): (x: number, y: number) => number {
  if (query.geodesic) return (x, y) => geodesicOrderDistanceM(centroidX, centroidY, x, y);
  if (query.wrap) return (x, y) => wrappedPlanarDistanceDeg(centroidX, centroidY, x, y);
  return (x, y) => planarDistanceDeg(centroidX, centroidY, x, y);
}

const isAreal = (g: JstsGeometry): boolean => g.getGeometryType() === "Polygon" || g.getGeometryType() === "MultiPolygon";

/** Computed on first use, then kept. */
function once<A>(make: () => A): () => A {
  let made = false;
  let value: A;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

/** How points and shapes are located against the query (query-area.ts), or undefined when it is not areal. */
function queryAreaOf(shape: ShapeGeometry, geometry: () => JstsGeometry, area: () => PreparedArea | undefined): () => QueryArea | undefined {
  return once(() => {
    const circle = shape.geodesicCircle;
    if (circle !== undefined && circle.radiusM > 0) return distanceArea((x, y) => geodesicDistanceM(circle.lon, circle.lat, x, y), circle.radiusM);
    if (shape.rectangle !== undefined) return rectangleArea(shape.rectangle);
    const ring = shape.ellipseRing;
    if (ring !== undefined && shape.ellipse !== undefined) return ellipseArea({ ...ring, vertices: shape.ellipse.vertices });
    const g = geometry();
    if (!isAreal(g)) return undefined;
    const shell = holeFreeShell(g);
    if (shell !== undefined) return ringArea(shell, geometry);
    return indexedArea(() => area()!, geometry);
  });
}

const isCollection = (g: JstsGeometry): boolean => g.getGeometryType() === "GeometryCollection";

/** The query ready to run against any index, or a 400. Never throws. */
export function prepareGeoQuery(query: GeoQuery): Either<GeoQueryError, PreparedGeoQuery> {
  try {
    const shape = shapeGeometry(query.shape, query);
    if (shape._tag === "Left") return left(queryParseError(shape.left));
    const given = shape.right.geometry;
    const geometry = typeof given === "function" ? once(given) : () => given;
    if (typeof given !== "function" && isCollection(given) && query.relation !== "none") return left(queryParseError(GC_RELATION_REASON));
    const facts = shape.right.envelopes !== undefined && shape.right.centroid !== undefined ? undefined : jstsFacts(geometry(), isCollection(geometry()));
    const centroid = shape.right.centroid ?? { x: facts!.centroidX, y: facts!.centroidY };
    if (!Number.isFinite(centroid.x) || !Number.isFinite(centroid.y)) return left(queryParseError("Invalid query geometry: no centroid"));
    const area = once(() => (isAreal(geometry()) ? preparedArea(geometry()) : undefined));
    return right({
      query,
      get geometry() {
        return geometry();
      },
      envelopes: shape.right.envelopes ?? [envelopeOf(facts!.minX, facts!.minY, facts!.maxX, facts!.maxY)],
      centroidX: centroid.x,
      centroidY: centroid.y,
      distanceTo: distanceFunction(query, centroid.x, centroid.y),
      area,
      queryArea: queryAreaOf(shape.right, geometry, area),
      geodesicCircle: shape.right.geodesicCircle,
      ellipse: shape.right.ellipse,
    });
  } catch (error) {
    return left(queryParseError(`Invalid query geometry: ${(error as Error).message}`));
  }
}
