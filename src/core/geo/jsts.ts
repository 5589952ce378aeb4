/**
 * The few jsts (JTS for JavaScript, GEOS's parent) operations the geo engine
 * uses, behind small typed functions. jsts 2.12 ships loose typings (mostly
 * `any`, and none for the methods its `monkey.js` patches in), so this file
 * is the one place that knows its module paths and casts to the minimal
 * interfaces below. All of it is pure computation.
 *
 * Relations go through `RelateOp` and DE-9IM matrices, except the four
 * predicates GEOS prepares for an areal query (intersects, contains,
 * containsProperly, covers), which go through jsts' prepared polygon, 25x
 * faster and what easton runs. jsts 2.12.1's prepared classes crash as
 * shipped (`PreparedGeometryFactory.prepare()` throws): their ESM
 * translation calls `super()` without arguments, so the base classes'
 * `constructor_` runs on `undefined` before the real one runs with the
 * geometry. `repairPreparedGeometry()` makes those two base initialisers
 * skip the empty call; the prepared predicates also need `monkey.js`, which
 * adds JTS's Geometry methods they fall back on. Both are one-time,
 * idempotent changes to jsts' own classes; the oracle tests check the
 * answers against PostGIS.
 */
import "jsts/org/locationtech/jts/monkey.js";
import CentroidImpl from "jsts/org/locationtech/jts/algorithm/Centroid.js";
import IndexedPointInAreaLocatorImpl from "jsts/org/locationtech/jts/algorithm/locate/IndexedPointInAreaLocator.js";
import CoordinateImpl from "jsts/org/locationtech/jts/geom/Coordinate.js";
import EnvelopeImpl from "jsts/org/locationtech/jts/geom/Envelope.js";
import GeometryFactoryImpl from "jsts/org/locationtech/jts/geom/GeometryFactory.js";
import GeoJSONReaderImpl from "jsts/org/locationtech/jts/io/GeoJSONReader.js";
import WKTReaderImpl from "jsts/org/locationtech/jts/io/WKTReader.js";
import BasicPreparedGeometryImpl from "jsts/org/locationtech/jts/geom/prep/BasicPreparedGeometry.js";
import PreparedPolygonImpl from "jsts/org/locationtech/jts/geom/prep/PreparedPolygon.js";
import PreparedPolygonPredicateImpl from "jsts/org/locationtech/jts/geom/prep/PreparedPolygonPredicate.js";
import RelateOpImpl from "jsts/org/locationtech/jts/operation/relate/RelateOp.js";
import RectangleIntersectsImpl from "jsts/org/locationtech/jts/operation/predicate/RectangleIntersects.js";
import RayCrossingCounterImpl from "jsts/org/locationtech/jts/algorithm/RayCrossingCounter.js";
import GeometricShapeFactoryImpl from "jsts/org/locationtech/jts/util/GeometricShapeFactory.js";

export interface JstsCoordinate {
  readonly x: number;
  readonly y: number;
}

export interface JstsEnvelope {
  getMinX(): number;
  getMinY(): number;
  getMaxX(): number;
  getMaxY(): number;
  isNull(): boolean;
}

export interface JstsGeometry {
  getGeometryType(): string;
  /** 0 for points, 1 for lines, 2 for areas (the highest among a collection's members). */
  getDimension(): number;
  getNumGeometries(): number;
  getGeometryN(n: number): JstsGeometry;
  getEnvelopeInternal(): JstsEnvelope;
  getCoordinates(): readonly JstsCoordinate[];
  isEmpty(): boolean;
}

/** A DE-9IM matrix; the `is*` methods are JTS's (= GEOS's) named predicates. */
export interface JstsIntersectionMatrix {
  isIntersects(): boolean;
  isDisjoint(): boolean;
  isContains(): boolean;
  isWithin(): boolean;
  isCovers(): boolean;
  isCoveredBy(): boolean;
  isCrosses(dimensionA: number, dimensionB: number): boolean;
  isOverlaps(dimensionA: number, dimensionB: number): boolean;
  isTouches(dimensionA: number, dimensionB: number): boolean;
  matches(pattern: string): boolean;
  toString(): string;
}

/** jsts' `Location`: where a point lies relative to an area. */
export const Location = { INTERIOR: 0, BOUNDARY: 1, EXTERIOR: 2 } as const;
export type Location = (typeof Location)[keyof typeof Location];

/* eslint-disable @typescript-eslint/no-explicit-any -- the jsts classes are untyped JavaScript */
const Coordinate = CoordinateImpl as any;
const Envelope = EnvelopeImpl as any;
const GeometryFactory = GeometryFactoryImpl as any;
const factory = new GeometryFactory();
const wktReader = new (WKTReaderImpl as any)(factory);
const geoJsonReader = new (GeoJSONReaderImpl as any)(factory);
const RelateOp = RelateOpImpl as any;
const Centroid = CentroidImpl as any;
const IndexedPointInAreaLocator = IndexedPointInAreaLocatorImpl as any;
const GeometricShapeFactory = GeometricShapeFactoryImpl as any;
const PreparedPolygon = PreparedPolygonImpl as any;
const RectangleIntersects = RectangleIntersectsImpl as any;
const RayCrossingCounter = RayCrossingCounterImpl as any;

const REPAIRED = Symbol.for("upholster.jsts.prepared-repaired");
/** See the module comment: the prepared base initialisers ignore the argument-less `super()` call. */
function repairPreparedGeometry(): void {
  for (const base of [BasicPreparedGeometryImpl, PreparedPolygonPredicateImpl] as any[]) {
    if (base[REPAIRED] === true) continue;
    const initialise = base.constructor_;
    base.constructor_ = function (this: unknown, ...args: unknown[]) {
      if (args[0] === undefined) return;
      initialise.apply(this, args);
    };
    base[REPAIRED] = true;
  }
}
repairPreparedGeometry();
/* eslint-enable @typescript-eslint/no-explicit-any */

/** GEOS's prepared-polygon predicates, `area PRED other`, and its indexed point location. */
export interface PreparedArea {
  intersects(other: JstsGeometry): boolean;
  contains(other: JstsGeometry): boolean;
  containsProperly(other: JstsGeometry): boolean;
  covers(other: JstsGeometry): boolean;
  /** Where a point lies (jsts' IndexedPointInAreaLocator, built on first use and shared with the predicates). */
  locate(x: number, y: number): Location;
}

/** Prepares a Polygon or MultiPolygon for repeated predicates against many geometries (indexes are built on first use). */
export function preparedArea(area: JstsGeometry): PreparedArea {
  const prepared = new PreparedPolygon(area);
  return {
    intersects: (other) => prepared.intersects(other) as boolean,
    contains: (other) => prepared.contains(other) as boolean,
    containsProperly: (other) => prepared.containsProperly(other) as boolean,
    covers: (other) => prepared.covers(other) as boolean,
    locate: (x, y) => prepared.getPointLocator().locate(new Coordinate(x, y)) as Location,
  };
}

/** Parses WKT (keywords in any case). Throws on malformed text; see query-geometry.ts for the checks jsts skips. */
export const readWkt = (text: string): JstsGeometry => wktReader.read(text) as JstsGeometry;

/** Builds a geometry from an already validated GeoJSON geometry object. Throws what JTS rejects (an unclosed ring, ...). */
export const geometryFromGeoJson = (geometry: object): JstsGeometry => geoJsonReader.read(geometry) as JstsGeometry;

export const pointGeometry = (x: number, y: number): JstsGeometry => factory.createPoint(new Coordinate(x, y)) as JstsGeometry;

/** GEOS's envelope-to-geometry: a point, a line (one zero side) or a rectangle. */
export const envelopeGeometry = (minX: number, minY: number, maxX: number, maxY: number): JstsGeometry =>
  factory.toGeometry(new Envelope(minX, maxX, minY, maxY)) as JstsGeometry;

/** A polygon through the given ring (closed by the caller). */
export const polygonGeometry = (ring: readonly (readonly [number, number])[]): JstsGeometry =>
  factory.createPolygon(factory.createLinearRing(ring.map(([x, y]) => new Coordinate(x, y)))) as JstsGeometry;

export const multiPolygonGeometry = (polygons: readonly JstsGeometry[]): JstsGeometry =>
  factory.createMultiPolygon([...polygons]) as JstsGeometry;

/**
 * GEOS's `GeometricShapeFactory::createCircle` (what hastings' easton builds
 * for radius and ellipse queries): `vertices` points at equal angles on the
 * ellipse with these half-widths, closed, as a polygon.
 */
export function ellipsePolygon(centreX: number, centreY: number, halfWidthX: number, halfWidthY: number, vertices = 100): JstsGeometry {
  const shapes = new GeometricShapeFactory(factory);
  shapes.setNumPoints(vertices);
  shapes.setCentre(new Coordinate(centreX, centreY));
  shapes.setWidth(halfWidthX * 2);
  shapes.setHeight(halfWidthY * 2);
  return shapes.createCircle() as JstsGeometry;
}

/** The full DE-9IM matrix of `a` against `b` (a first). */
export const relate = (a: JstsGeometry, b: JstsGeometry): JstsIntersectionMatrix => RelateOp.relate(a, b) as JstsIntersectionMatrix;

/** JTS's centroid (= GEOS's): area-weighted for areas, length-weighted for lines, the mean for points. */
export function centroidOf(geometry: JstsGeometry): JstsCoordinate {
  const c = Centroid.getCentroid(geometry) as JstsCoordinate | null;
  return c === null ? { x: NaN, y: NaN } : { x: c.x, y: c.y };
}

/** A fast point-in-area test for an areal geometry (built once, used per point). */
export function pointInAreaLocator(area: JstsGeometry): (x: number, y: number) => Location {
  const locator = new IndexedPointInAreaLocator(area);
  return (x, y) => locator.locate(new Coordinate(x, y)) as Location;
}

/** jsts coordinates of a ring given as arrays (for `ringPointLocation` and building polygons). */
export function coordinatesOf(xs: ArrayLike<number>, ys: ArrayLike<number>): JstsCoordinate[] {
  const ring: JstsCoordinate[] = new Array<JstsCoordinate>(xs.length);
  for (let i = 0; i < xs.length; i++) ring[i] = new Coordinate(xs[i], ys[i]) as JstsCoordinate;
  return ring;
}

/**
 * Where a point lies against one closed ring: jsts' RayCrossingCounter, the
 * very count its point-in-area locators make (simple and indexed alike), so
 * the answer is theirs; O(ring) per point and nothing to build.
 */
export function ringPointLocation(ring: readonly JstsCoordinate[]): (x: number, y: number) => Location {
  return (x, y) => RayCrossingCounter.locatePointInRing(new Coordinate(x, y), ring) as Location;
}

/** The exterior ring's coordinates of a Polygon without holes; undefined for anything else. */
export function holeFreeShell(geometry: JstsGeometry): readonly JstsCoordinate[] | undefined {
  const g = geometry as any; // eslint-disable-line @typescript-eslint/no-explicit-any -- jsts' untyped Polygon
  if (geometry.getGeometryType() !== "Polygon" || g.getNumInteriorRing() !== 0) return undefined;
  return g.getExteriorRing().getCoordinates() as readonly JstsCoordinate[];
}

/**
 * JTS's `intersects` of a proper rectangle (minX < maxX, minY < maxY) with
 * a geometry: `RectangleIntersects`, the path `Geometry.intersects` itself
 * takes when one side is a rectangle.
 */
export const rectangleIntersects = (minX: number, minY: number, maxX: number, maxY: number, other: JstsGeometry): boolean =>
  RectangleIntersects.intersects(envelopeGeometry(minX, minY, maxX, maxY), other) as boolean;

/** What jsts' WKT reader builds for `POLYGON((...), ...)`: one linear ring per ring, the first the shell. */
export function polygonFromRings(rings: readonly (readonly JstsCoordinate[])[]): JstsGeometry {
  const linear = rings.map((ring) => factory.createLinearRing([...ring]));
  return (linear.length > 1 ? factory.createPolygon(linear[0], linear.slice(1)) : factory.createPolygon(linear[0])) as JstsGeometry;
}
