import { describe, expect, it } from "vitest";
import { isLeft } from "fp-ts/lib/Either.js";
import {
  destination,
  ellipseHalfWidthsDeg,
  ELLIPSE_VERTICES,
  GC_RELATION_REASON,
  geodesicDistanceM,
  parseGeoRequest,
  type PreparedGeoQuery,
} from "../../src/core/geo/index.js";

const prepared = (qs: string): PreparedGeoQuery => {
  const r = parseGeoRequest(new URLSearchParams(qs));
  if (isLeft(r)) throw new Error(r.left.reason);
  return r.right;
};

const reason = (qs: string): string => {
  const r = parseGeoRequest(new URLSearchParams(qs));
  if (!isLeft(r)) throw new Error(`expected ${qs} to be refused`);
  expect(r.left).toMatchObject({ status: 400, error: "query_parse_error" });
  return r.left.reason;
};

describe("bbox", () => {
  it("is the envelope of the two corners, in any order, centred", () => {
    for (const qs of ["bbox=-10,-5,10,5", "bbox=10,5,-10,-5", "bbox=-10,5,10,-5"]) {
      const q = prepared(qs);
      expect(q.envelopes).toEqual([{ minX: -10, minY: -5, maxX: 10, maxY: 5 }]);
      expect(q.centroidX).toBeCloseTo(0, 12);
      expect(q.centroidY).toBeCloseTo(0, 12);
      expect(q.geometry.getGeometryType()).toBe("Polygon");
    }
  });

  it("hastings' antimeridian behaviour by default: 170..-170 is the band -170..170", () => {
    expect(prepared("bbox=170,-10,-170,10").envelopes).toEqual([{ minX: -170, minY: -10, maxX: 170, maxY: 10 }]);
  });

  it("wrap=true: west > east crosses the antimeridian, distances wrap", () => {
    const q = prepared("bbox=170,-10,-170,10&wrap=true");
    expect(q.envelopes).toEqual([
      { minX: 170, minY: -10, maxX: 180, maxY: 10 },
      { minX: -180, minY: -10, maxX: -170, maxY: 10 },
    ]);
    expect(q.geometry.getGeometryType()).toBe("MultiPolygon");
    expect(Math.abs(q.centroidX)).toBe(180);
    expect(q.distanceTo(-179, 0)).toBeCloseTo(1, 12);
    expect(q.distanceTo(179, 0)).toBeCloseTo(1, 12);
  });

  it("a point bbox is a point; 6/8 numbers use x and y of mins then maxs", () => {
    expect(prepared("bbox=1,2,1,2").geometry.getGeometryType()).toBe("Point");
    expect(prepared("bbox=1,2,100,3,4,200").envelopes).toEqual([{ minX: 1, minY: 2, maxX: 3, maxY: 4 }]);
  });
});

describe("circle and ellipse", () => {
  it("hastings' 100-vertex ellipse with ellipsoidal half-widths at azimuth 90 and 0", () => {
    const q = prepared("lon=-71&lat=42&radius=100000");
    const coordinates = q.geometry.getCoordinates();
    expect(coordinates).toHaveLength(ELLIPSE_VERTICES + 1);
    const { x, y } = ellipseHalfWidthsDeg(-71, 42, 100_000, 100_000);
    // 100 km east at 42N is ~1.21 degrees of longitude, north ~0.90 degrees of latitude.
    expect(x).toBeCloseTo(1.2069, 3);
    expect(y).toBeCloseTo(0.9004, 3);
    expect(q.envelopes[0]!.maxX - q.envelopes[0]!.minX).toBeCloseTo(2 * x, 9);
    expect(q.envelopes[0]!.maxY - q.envelopes[0]!.minY).toBeCloseTo(2 * y, 6);
    expect(q.centroidX).toBeCloseTo(-71, 9);
    expect(q.centroidY).toBeCloseTo(42, 9);
  });

  it("ellipse ranges go to their own axes", () => {
    const q = prepared("lon=0&lat=0&rangex=200000&rangey=100000");
    const e = q.envelopes[0]!;
    expect(e.maxX / e.maxY).toBeCloseTo(ellipseHalfWidthsDeg(0, 0, 200_000, 0).x / ellipseHalfWidthsDeg(0, 0, 0, 100_000).y, 6);
  });

  it("a zero radius is the centre point", () => {
    expect(prepared("lon=3&lat=4&radius=0").geometry.getGeometryType()).toBe("Point");
    expect(prepared("lon=3&lat=4&rangex=0&rangey=0").envelopes).toEqual([{ minX: 3, minY: 4, maxX: 3, maxY: 4 }]);
  });

  it("a centre off the ellipsoid is a 400", () => {
    expect(reason("lon=0&lat=91&radius=10")).toMatch(/lat 91 is outside/);
  });

  it("geodesic=true: the geodesic circle, distances in metres", () => {
    const q = prepared("lon=10&lat=50&radius=100000&geodesic=true");
    expect(q.geodesicCircle).toEqual({ lon: 10, lat: 50, radiusM: 100_000 });
    const east = destination(10, 50, 90, 100_000);
    expect(q.envelopes[0]!.maxX).toBeGreaterThan(east.lon);
    expect(q.distanceTo(east.lon, east.lat)).toBeCloseTo(100_000, 3);
    expect(geodesicDistanceM(10, 50, 10, 51)).toBeCloseTo(111_238.68, 1);
  });

  it("geodesic=true across the antimeridian and around a pole", () => {
    const across = prepared("lon=179.5&lat=0&radius=200000&geodesic=true");
    expect(across.envelopes).toHaveLength(2);
    expect(across.geometry.getGeometryType()).toBe("MultiPolygon");
    const polar = prepared("lon=0&lat=89.5&radius=200000&geodesic=true");
    expect(polar.envelopes[0]).toMatchObject({ minX: -180, maxX: 180, maxY: 90 });
  });
});

describe("WKT", () => {
  it("keywords in any case", () => {
    expect(prepared("g=point(-71 42)").geometry.getGeometryType()).toBe("Point");
    expect(prepared("g=PoLyGoN((0 0, 1 0, 1 1, 0 0))").geometry.getGeometryType()).toBe("Polygon");
  });

  it("refuses what GEOS refuses", () => {
    expect(reason("g=POINT(1)")).toMatch(/^Invalid WKT geometry: /);
    expect(reason("g=POINT(1 2) garbage")).toBe("Invalid WKT geometry: unexpected text after the geometry");
    expect(reason("g=POINT(1 2))")).toBe("Invalid WKT geometry: unexpected text after the geometry");
    expect(reason("g=POLYGON((0 0, 1 0, 1 1))")).toMatch(/^Invalid WKT geometry: /);
    expect(reason("g=POINT EMPTY")).toBe("Invalid empty geometry for get_bounds.");
    expect(reason("g=CIRCLE(1 2)")).toMatch(/^Invalid WKT geometry: /);
  });

  it("a GeometryCollection takes no relation but none", () => {
    expect(reason("g=GEOMETRYCOLLECTION(POINT(1 1))")).toBe(GC_RELATION_REASON);
    expect(prepared("g=GEOMETRYCOLLECTION(POINT(1 1))&relation=none").geometry.getGeometryType()).toBe("GeometryCollection");
    expect(prepared("g=GEOMETRYCOLLECTION(POINT(1 1))&nearest=true").query.relation).toBe("none");
  });
});
