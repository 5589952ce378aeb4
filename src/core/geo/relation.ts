/**
 * `query REL doc`, query first, as easton's GeomFilter (GEOS prepared
 * predicates): `contains` finds docs inside the query, `within` docs that
 * contain it. Exact, through jsts' DE-9IM matrix (`RelateOp`), the named
 * predicates being JTS's (= GEOS's); contains_properly is `T**FF*FF*`.
 * `none` is the bounding-box test alone, which the candidate search has
 * already done. For an areal query, intersects / disjoint / contains /
 * contains_properly / covers use jsts' prepared polygon (GEOS's prepared
 * predicates, as easton), falling back to the matrix if it ever throws.
 *
 * Fast paths, same answers:
 * - a point doc against an areal query: one point-in-area location
 *   (interior / boundary / exterior) decides every relation;
 * - against hastings' radius/ellipse polygon most points need not even
 *   that: the polygon's vertices lie on the ellipse, so it is inside the
 *   ellipse and (an affine image of a regular n-gon, which holds the disk of
 *   radius cos(pi/n)) holds the rectangle |u|, |v| <= cos(pi/n)/sqrt(2) in
 *   ellipse units; points inside that rectangle are interior, points
 *   outside the ellipse exterior (with a 1e-9 margin for rounding), and only
 *   the band between is located exactly;
 * - `geodesic=true` radius queries: a point doc is in the circle iff its
 *   geodesic distance to the centre is at most the radius.
 *
 * A GeometryCollection doc (GEOS relates refuse collections; PostGIS and
 * newer GEOS accept some): `intersects` and `disjoint` are decided member by
 * member, which is exact; every other relation is false for it.
 */
import type { Relation } from "./query-params.js";
import type { PreparedGeoQuery, QueryEllipse } from "./query-geometry.js";
import { geodesicDistanceM } from "./geodesic.js";
import { Location, pointGeometry, relate, type JstsGeometry, type PreparedArea } from "./jsts.js";

/** The per-entry view relations need from an index. */
export interface RelationOperands {
  isPoint(entry: number): boolean;
  isCollection(entry: number): boolean;
  /** A point entry's position is its centroid. */
  centroidX(entry: number): number;
  centroidY(entry: number): number;
  /** The jsts geometry of a non-point entry. */
  jsts(entry: number): JstsGeometry;
}

export type RelationTest = (entry: number) => boolean;

const CONTAINS_PROPERLY = "T**FF*FF*";

/**
 * `query REL doc` for two jsts geometries. A doc JTS cannot relate (a
 * TopologyException on an invalid figure) does not match, rather than
 * failing the whole query as it would in hastings.
 */
export function relates(relation: Exclude<Relation, "none">, query: JstsGeometry, doc: JstsGeometry): boolean {
  let matrix: ReturnType<typeof relate>;
  try {
    matrix = relate(query, doc);
  } catch {
    return false;
  }
  switch (relation) {
    case "intersects":
      return matrix.isIntersects();
    case "disjoint":
      return matrix.isDisjoint();
    case "contains":
      return matrix.isContains();
    case "contains_properly":
      return matrix.matches(CONTAINS_PROPERLY);
    case "covers":
      return matrix.isCovers();
    case "covered_by":
      return matrix.isCoveredBy();
    case "within":
      return matrix.isWithin();
    case "crosses":
      return matrix.isCrosses(query.getDimension(), doc.getDimension());
    case "overlaps":
      return matrix.isOverlaps(query.getDimension(), doc.getDimension());
    case "touches":
      return matrix.isTouches(query.getDimension(), doc.getDimension());
  }
}

/** `area REL point` from where the point lies (DE-9IM worked out for a 2-D query and a 0-D doc). */
function pointInAreaRelates(relation: Exclude<Relation, "none">, location: Location): boolean {
  switch (relation) {
    case "intersects":
    case "covers":
      return location !== Location.EXTERIOR;
    case "disjoint":
      return location === Location.EXTERIOR;
    case "contains":
    case "contains_properly":
      return location === Location.INTERIOR;
    case "touches":
      return location === Location.BOUNDARY;
    // An area is never within, covered by, crossing or overlapping a point.
    case "within":
    case "covered_by":
    case "crosses":
    case "overlaps":
      return false;
  }
}

/** The geodesic circle as an area whose boundary is at exactly the radius. */
function circleLocation(distanceM: number, radiusM: number): Location {
  if (distanceM < radiusM) return Location.INTERIOR;
  return distanceM === radiusM ? Location.BOUNDARY : Location.EXTERIOR;
}

const ROUNDING_MARGIN = 1e-9;

/** Where a point lies against hastings' ellipse polygon when that is evident, else undefined. */
function evidentEllipseLocation(ellipse: QueryEllipse): (x: number, y: number) => Location | undefined {
  const { centreX, centreY, halfWidthX, halfWidthY, vertices } = ellipse;
  if (!(halfWidthX > 0 && halfWidthY > 0)) return () => undefined;
  const inner = (Math.cos(Math.PI / vertices) / Math.SQRT2) * (1 - ROUNDING_MARGIN);
  const outerSquared = 1 + ROUNDING_MARGIN;
  return (x, y) => {
    const u = (x - centreX) / halfWidthX;
    const v = (y - centreY) / halfWidthY;
    if (Math.abs(u) <= inner && Math.abs(v) <= inner) return Location.INTERIOR;
    if (u * u + v * v > outerSquared) return Location.EXTERIOR;
    return undefined;
  };
}

/** `query REL doc` for a non-point doc; the prepared query answers what GEOS prepares. */
type ShapeRelates = (doc: JstsGeometry) => boolean;

/**
 * GEOS's prepared predicates for an areal query (what easton runs):
 * intersects, contains, contains_properly, covers, and disjoint as not
 * intersects; the other relations through the full matrix.
 */
function shapeRelates(relation: Exclude<Relation, "none">, query: JstsGeometry, prepared: () => PreparedArea | undefined): ShapeRelates {
  const viaPrepared = (predicate: (area: PreparedArea, doc: JstsGeometry) => boolean): ShapeRelates => (doc) => {
    const area = prepared();
    if (area === undefined) return relates(relation, query, doc);
    try {
      return predicate(area, doc);
    } catch {
      return relates(relation, query, doc);
    }
  };
  switch (relation) {
    case "intersects":
      return viaPrepared((area, doc) => area.intersects(doc));
    case "disjoint":
      return viaPrepared((area, doc) => !area.intersects(doc));
    case "contains":
      return viaPrepared((area, doc) => area.contains(doc));
    case "contains_properly":
      return viaPrepared((area, doc) => area.containsProperly(doc));
    case "covers":
      return viaPrepared((area, doc) => area.covers(doc));
    default:
      return (doc) => relates(relation, query, doc);
  }
}

function collectionRelates(relation: Exclude<Relation, "none">, doc: JstsGeometry, intersects: ShapeRelates): boolean {
  if (relation !== "intersects" && relation !== "disjoint") return false;
  let meets = false;
  for (let i = 0; i < doc.getNumGeometries() && !meets; i++) meets = intersects(doc.getGeometryN(i));
  return relation === "intersects" ? meets : !meets;
}

/** The relation filter of a prepared query over an index's entries. */
export function relationTest(prepared: PreparedGeoQuery, entries: RelationOperands): RelationTest {
  const relation = prepared.query.relation;
  if (relation === "none") return () => true;
  const { geometry, geodesicCircle, area } = prepared;
  const evident = prepared.ellipse === undefined ? undefined : evidentEllipseLocation(prepared.ellipse);
  const shape = shapeRelates(relation, geometry, area);
  const shapeIntersects = relation === "intersects" ? shape : shapeRelates("intersects", geometry, area);
  const pointTest = (x: number, y: number): boolean => {
    if (geodesicCircle !== undefined && geodesicCircle.radiusM > 0) {
      const distanceM = geodesicDistanceM(geodesicCircle.lon, geodesicCircle.lat, x, y);
      return pointInAreaRelates(relation, Number.isNaN(distanceM) ? Location.EXTERIOR : circleLocation(distanceM, geodesicCircle.radiusM));
    }
    const evidentLocation = evident?.(x, y);
    if (evidentLocation !== undefined) return pointInAreaRelates(relation, evidentLocation);
    const preparedQuery = area();
    if (preparedQuery !== undefined) return pointInAreaRelates(relation, preparedQuery.locate(x, y));
    return relates(relation, geometry, pointGeometry(x, y));
  };
  return (entry) => {
    if (entries.isPoint(entry)) return pointTest(entries.centroidX(entry), entries.centroidY(entry));
    const doc = entries.jsts(entry);
    return entries.isCollection(entry) ? collectionRelates(relation, doc, shapeIntersects) : shape(doc);
  };
}
