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
 * Fast paths, same answers (query-area.ts): a point doc against an areal
 * query is one point location (interior / boundary / exterior decides every
 * relation), made without building jsts structures for the common shapes;
 * a non-point doc whose box and vertices prove where it lies (inside the
 * query's interior, outside it, or sharing a point with it) is decided
 * from that, for the relations it decides; the rest goes to jsts.
 *
 * A GeometryCollection doc (GEOS relates refuse collections; PostGIS and
 * newer GEOS accept some): `intersects` and `disjoint` are decided member by
 * member, which is exact; every other relation is false for it.
 */
import type { Relation } from "./query-params.js";
import type { PreparedGeoQuery } from "./query-geometry.js";
import type { ShapeOperands, ShapeVerdict } from "./query-area.js";
import { Location, pointGeometry, relate, type JstsGeometry, type PreparedArea } from "./jsts.js";

/** The per-entry view relations need from an index. */
export interface RelationOperands extends ShapeOperands {
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

/** What a shape verdict settles: everything when the doc is inside or outside, intersects and disjoint when they meet. */
function decided(relation: Exclude<Relation, "none">, verdict: ShapeVerdict): boolean | undefined {
  switch (verdict) {
    case "outside":
      return relation === "disjoint";
    case "meets":
      return relation === "intersects" ? true : relation === "disjoint" ? false : undefined;
    case "inside":
      // The doc lies in the query's interior: they meet, the query contains (properly) and covers it,
      // nothing else (the query is not within or covered by a smaller doc, their interiors meet).
      return relation === "intersects" || relation === "contains" || relation === "contains_properly" || relation === "covers";
  }
}

/** The relation filter for a point doc at (x, y) (an entry whose `isPoint` holds, at its centroid). */
export type PointRelationTest = (x: number, y: number) => boolean;

const always = (): boolean => true;

/** `query REL point` for a point doc at (x, y): where it lies for an areal query, else jsts. */
export function pointRelationTest(prepared: PreparedGeoQuery): PointRelationTest {
  const relation = prepared.query.relation;
  if (relation === "none") return always;
  const area = prepared.queryArea();
  return area === undefined
    ? (x, y) => relates(relation, prepared.geometry, pointGeometry(x, y))
    : (x, y) => pointInAreaRelates(relation, area.locate(x, y));
}

/** The relation filter of a prepared query over an index's entries. */
export function relationTest(prepared: PreparedGeoQuery, entries: RelationOperands): RelationTest {
  const relation = prepared.query.relation;
  if (relation === "none") return always;
  const area = prepared.queryArea();
  const geometry = (): JstsGeometry => prepared.geometry;
  let shape: ShapeRelates | undefined;
  let shapeIntersects: ShapeRelates | undefined;
  const pointTest = pointRelationTest(prepared);
  return (entry) => {
    if (entries.isPoint(entry)) return pointTest(entries.centroidX(entry), entries.centroidY(entry));
    const collection = entries.isCollection(entry);
    if (collection && relation !== "intersects" && relation !== "disjoint") return false;
    const verdict = area?.shapeVerdict(entries, entry);
    const known = verdict === undefined ? undefined : decided(relation, verdict);
    if (known !== undefined) return known;
    const doc = entries.jsts(entry);
    if (!collection) return (shape ??= shapeRelates(relation, geometry(), prepared.area))(doc);
    return collectionRelates(relation, doc, (shapeIntersects ??= shapeRelates("intersects", geometry(), prepared.area)));
  };
}
