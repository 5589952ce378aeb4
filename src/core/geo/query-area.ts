/**
 * An areal query geometry (a bbox's rectangle, hastings' radius/ellipse
 * polygon, a WKT polygon, upholster's geodesic circle) as the relation
 * filter uses it, with fast paths that give jsts' answers without jsts'
 * heavy machinery:
 *
 * - `locate(x, y)`: where a point lies (interior, boundary, exterior),
 *   exactly as jsts' point-in-area locators say: by comparisons for a
 *   rectangle, by jsts' own ray-crossing count over one ring (nothing to
 *   build per query) for a hole-free polygon, by the indexed locator of the
 *   prepared polygon otherwise; for the ellipse polygon most points are
 *   settled first by the circles it lies between (below);
 * - `shapeVerdict(doc)`: what a non-point doc's box and vertices prove,
 *   when they prove it: `inside` (the doc lies in the query's interior),
 *   `outside` (they share no point) or `meets` (they share a point); else
 *   undefined, and jsts relates the two (relation.ts).
 *
 * The ellipse: hastings' polygon has its n vertices on the ellipse, at
 * equal angles; scaled to the unit circle (u = (x - cx) / rx, v likewise)
 * it is the regular n-gon inscribed in it, which holds the disk of radius
 * cos(pi / n) and lies within the unit disk. A point with u^2 + v^2 below
 * the first is interior, beyond the second exterior; only the thin ring
 * between (0.05% of the area for n = 100) is located exactly. The margins
 * cover the rounding of the vertices and of u and v. A doc none of whose
 * segments comes within the outer circle shares no boundary point with the
 * polygon, so the polygon lies wholly inside one of the doc's areas or
 * wholly outside the doc: it is `outside` when the centre is in none of the
 * doc's polygons (an even-odd count over each polygon's rings, made far
 * from every edge, so robust), and left to jsts otherwise.
 */
import type { GeoJsonGeometry } from "./geojson.js";
import type { Envelope } from "./indexed-geometry.js";
import {
  coordinatesOf,
  Location,
  rectangleIntersects,
  ringPointLocation,
  type JstsCoordinate,
  type JstsGeometry,
  type PreparedArea,
} from "./jsts.js";

/** What the verdicts read of a doc entry. */
export interface ShapeOperands {
  /** The doc entry's bounding box. */
  envelopeOf(entry: number): Envelope;
  geometry(entry: number): GeoJsonGeometry;
}

export type ShapeVerdict = "inside" | "outside" | "meets";

export interface QueryArea {
  locate(x: number, y: number): Location;
  shapeVerdict(doc: ShapeOperands, entry: number): ShapeVerdict | undefined;
}

/** Vertices looked at before giving up on a `meets` verdict (each costs a location). */
const MAX_VERTICES_CHECKED = 64;

/** Calls `test` on each position's x, y until it returns true (at most `max` positions in all); true if one did. */
export function someVertex(g: GeoJsonGeometry, max: number, test: (x: number, y: number) => boolean): boolean {
  let budget = max;
  const visit = (p: readonly number[]): boolean => budget-- > 0 && test(p[0]!, p[1]!);
  const walk = (member: GeoJsonGeometry): boolean => {
    switch (member.type) {
      case "Point":
        return visit(member.coordinates);
      case "LineString":
      case "MultiPoint":
        return member.coordinates.some(visit);
      case "Polygon":
      case "MultiLineString":
        return member.coordinates.some((line) => line.some(visit));
      case "MultiPolygon":
        return member.coordinates.some((polygon) => polygon.some((line) => line.some(visit)));
      case "GeometryCollection":
        return member.geometries.some((m) => budget > 0 && walk(m));
    }
  };
  return walk(g);
}

/** A doc box of positive width and height (JTS makes a rectangle of it, else a line or a point). */
const isProperBox = (e: Envelope): boolean => e.minX < e.maxX && e.minY < e.maxY;

/** `meets` if a vertex lies in or on the area, `outside` if the doc's box misses the area, else undefined. */
function verdictByVerticesAndBox(
  doc: ShapeOperands,
  entry: number,
  locate: (x: number, y: number) => Location,
  geometry: () => JstsGeometry,
): ShapeVerdict | undefined {
  if (someVertex(doc.geometry(entry), MAX_VERTICES_CHECKED, (x, y) => locate(x, y) !== Location.EXTERIOR)) return "meets";
  const box = doc.envelopeOf(entry);
  if (isProperBox(box) && !rectangleIntersects(box.minX, box.minY, box.maxX, box.maxY, geometry())) return "outside";
  return undefined;
}

/** A bbox query's rectangle (positive width and height). */
export function rectangleArea(rectangle: Envelope): QueryArea {
  const { minX, minY, maxX, maxY } = rectangle;
  const locate = (x: number, y: number): Location => {
    if (x < minX || x > maxX || y < minY || y > maxY) return Location.EXTERIOR;
    return x === minX || x === maxX || y === minY || y === maxY ? Location.BOUNDARY : Location.INTERIOR;
  };
  return {
    locate,
    shapeVerdict(doc, entry) {
      const box = doc.envelopeOf(entry);
      if (box.minX > minX && box.maxX < maxX && box.minY > minY && box.maxY < maxY) return "inside";
      return someVertex(doc.geometry(entry), MAX_VERTICES_CHECKED, (x, y) => locate(x, y) !== Location.EXTERIOR) ? "meets" : undefined;
    },
  };
}

/** A Polygon without holes: its ring, counted point by point. */
export function ringArea(ring: readonly JstsCoordinate[], geometry: () => JstsGeometry): QueryArea {
  const locate = ringPointLocation(ring);
  return { locate, shapeVerdict: (doc, entry) => verdictByVerticesAndBox(doc, entry, locate, geometry) };
}

/** Any other polygonal query (holes, several polygons): the prepared polygon's indexed locator. */
export function indexedArea(prepared: () => PreparedArea, geometry: () => JstsGeometry): QueryArea {
  const locate = (x: number, y: number): Location => prepared().locate(x, y);
  return { locate, shapeVerdict: (doc, entry) => verdictByVerticesAndBox(doc, entry, locate, geometry) };
}

/** A geodesic circle: a point is in it when within the radius; shapes are related to its polygon by jsts. */
export function distanceArea(distanceM: (x: number, y: number) => number, radiusM: number): QueryArea {
  return {
    locate(x, y) {
      const d = distanceM(x, y);
      if (Number.isNaN(d) || d > radiusM) return Location.EXTERIOR;
      return d === radiusM ? Location.BOUNDARY : Location.INTERIOR;
    },
    shapeVerdict: () => undefined,
  };
}

export interface EllipseShape {
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  readonly centreX: number;
  readonly centreY: number;
  readonly radiusX: number;
  readonly radiusY: number;
  readonly vertices: number;
}

/** The relative margin for one axis: 1e-9, plus the rounding of coordinates near `centre` measured in radii. */
const marginOf = (centre: number, radius: number): number => 1e-9 + (16 * Number.EPSILON * (Math.abs(centre) + radius)) / radius;

/**
 * True when every vertex and segment of `g` stays strictly beyond `outerSq`
 * (squared, in the unit-circle coordinates `uOf`, `vOf`) and no polygon of
 * `g` holds the origin; false as soon as either may fail.
 */
function clearOfDisk(g: GeoJsonGeometry, uOf: (x: number) => number, vOf: (y: number) => number, outerSq: number): boolean {
  /** Each segment of the line clear of the disk; for a ring, `crossings` counts its crossings of the ray u > 0, v = 0. */
  const lineClear = (line: readonly (readonly number[])[], ring: { crossings: number } | undefined): boolean => {
    let u1 = uOf(line[0]![0]!);
    let v1 = vOf(line[0]![1]!);
    if (u1 * u1 + v1 * v1 <= outerSq) return false;
    for (let i = 1; i < line.length; i++) {
      const u2 = uOf(line[i]![0]!);
      const v2 = vOf(line[i]![1]!);
      const du = u2 - u1;
      const dv = v2 - v1;
      const lengthSq = du * du + dv * dv;
      const t = lengthSq > 0 ? Math.min(1, Math.max(0, -(u1 * du + v1 * dv) / lengthSq)) : 0;
      const pu = u1 + t * du;
      const pv = v1 + t * dv;
      if (pu * pu + pv * pv <= outerSq) return false;
      // Half-open in v, so a vertex on the ray counts once; the segment is far from the origin, so the sign is clear.
      if (ring !== undefined && v1 > 0 !== v2 > 0 && u1 + ((0 - v1) * du) / dv > 0) ring.crossings++;
      u1 = u2;
      v1 = v2;
    }
    return true;
  };
  const polygonClear = (rings: readonly (readonly (readonly number[])[])[]): boolean => {
    const count = { crossings: 0 };
    for (const ring of rings) if (!lineClear(ring, count)) return false;
    return count.crossings % 2 === 0;
  };
  switch (g.type) {
    case "Point":
      return lineClear([g.coordinates], undefined);
    case "MultiPoint":
      return g.coordinates.every((p) => lineClear([p], undefined));
    case "LineString":
      return lineClear(g.coordinates, undefined);
    case "MultiLineString":
      return g.coordinates.every((line) => lineClear(line, undefined));
    case "Polygon":
      return polygonClear(g.coordinates);
    case "MultiPolygon":
      return g.coordinates.every(polygonClear);
    case "GeometryCollection":
      return g.geometries.every((member) => clearOfDisk(member, uOf, vOf, outerSq));
  }
}

/** hastings' radius or ellipse polygon (see the file comment). */
export function ellipseArea(shape: EllipseShape): QueryArea {
  const { centreX, centreY, radiusX, radiusY } = shape;
  let ring: JstsCoordinate[] | undefined;
  const exact = (x: number, y: number): Location => ringPointLocation((ring ??= coordinatesOf(shape.xs, shape.ys)))(x, y);
  if (!(radiusX > 0 && radiusY > 0 && Number.isFinite(radiusX) && Number.isFinite(radiusY))) {
    return { locate: exact, shapeVerdict: () => undefined };
  }
  const margin = Math.max(marginOf(centreX, radiusX), marginOf(centreY, radiusY));
  const inner = Math.cos(Math.PI / shape.vertices) - margin;
  const innerSq = inner > 0 ? inner * inner : -1;
  const outerSq = (1 + margin) * (1 + margin);
  const uOf = (x: number): number => (x - centreX) / radiusX;
  const vOf = (y: number): number => (y - centreY) / radiusY;
  const locate = (x: number, y: number): Location => {
    const u = uOf(x);
    const v = vOf(y);
    const sq = u * u + v * v;
    if (sq <= innerSq) return Location.INTERIOR;
    if (sq > outerSq) return Location.EXTERIOR;
    return exact(x, y);
  };
  const evidentlyInside = (x: number, y: number): boolean => {
    const u = uOf(x);
    const v = vOf(y);
    return u * u + v * v <= innerSq;
  };
  return {
    locate,
    shapeVerdict(doc, entry) {
      const box = doc.envelopeOf(entry);
      const [u1, u2, v1, v2] = [uOf(box.minX), uOf(box.maxX), vOf(box.minY), vOf(box.maxY)];
      const farU = Math.max(Math.abs(u1), Math.abs(u2));
      const farV = Math.max(Math.abs(v1), Math.abs(v2));
      if (farU * farU + farV * farV <= innerSq) return "inside";
      const nearU = u1 > 0 ? u1 : u2 < 0 ? -u2 : 0;
      const nearV = v1 > 0 ? v1 : v2 < 0 ? -v2 : 0;
      if (nearU * nearU + nearV * nearV > outerSq) return "outside";
      const g = doc.geometry(entry);
      if (someVertex(g, MAX_VERTICES_CHECKED * 4, evidentlyInside)) return "meets";
      return clearOfDisk(g, uOf, vOf, outerSq) ? "outside" : undefined;
    },
  };
}
