import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isLeft, isRight } from "fp-ts/lib/Either.js";
import { decodeGeoQuery, encodeBookmark, parseGeoRequest, type GeoQuery, type GeoQueryOptions } from "../../src/core/geo/index.js";

const decode = (qs: string, options?: GeoQueryOptions): GeoQuery => {
  const r = decodeGeoQuery(new URLSearchParams(qs), options);
  if (isLeft(r)) throw new Error(`unexpected error: ${r.left.reason}`);
  return r.right;
};

const reason = (qs: string, options?: GeoQueryOptions): string => {
  const r = decodeGeoQuery(new URLSearchParams(qs), options);
  if (isRight(r)) throw new Error(`expected an error for ${qs}`);
  expect(r.left).toMatchObject({ status: 400, error: "query_parse_error" });
  return r.left.reason;
};

describe("decodeGeoQuery: geometry", () => {
  it("takes exactly one query geometry, by any of its names", () => {
    expect(decode("g=point(-71 42)").shape).toEqual({ kind: "wkt", wkt: "point(-71 42)" });
    expect(decode("geometry=POINT(1 2)").shape).toEqual({ kind: "wkt", wkt: "POINT(1 2)" });
    expect(decode("bbox=1,2,3,4").shape).toEqual({ kind: "bbox", coordinates: [1, 2, 3, 4] });
    expect(decode("lon=1&lat=2&radius=3").shape).toEqual({ kind: "circle", x: 1, y: 2, radiusM: 3 });
    expect(decode("x=1&y=2&r=3").shape).toEqual({ kind: "circle", x: 1, y: 2, radiusM: 3 });
    expect(decode("lon=1&lat=2&rangex=3&rangey=4").shape).toEqual({ kind: "ellipse", x: 1, y: 2, rangeXM: 3, rangeYM: 4 });
    expect(decode("x=1&y=2&x_range=3&y_range=4").shape).toEqual({ kind: "ellipse", x: 1, y: 2, rangeXM: 3, rangeYM: 4 });
  });

  it("hastings' errors for none and several", () => {
    expect(reason("limit=3")).toBe("No geometry query specified.");
    expect(reason("lon=1&lat=2")).toBe("No geometry query specified.");
    expect(reason("g=POINT(1 2)&bbox=1,2,3,4")).toBe("Multiple geometry queries specified.");
    expect(reason("lon=1&lat=2&radius=3&rangex=1&rangey=1")).toBe("Multiple geometry queries specified.");
  });

  it("the first occurrence of a geometry parameter counts", () => {
    expect(decode("bbox=1,2,3,4&bbox=5,6,7,8").shape).toEqual({ kind: "bbox", coordinates: [1, 2, 3, 4] });
    expect(decode("lon=1&x=9&lat=2&radius=3").shape).toMatchObject({ x: 1 });
  });

  it("bbox: 4, 6 or 8 numbers, empty tokens dropped", () => {
    expect(decode("bbox=1,,2,3,4").shape).toEqual({ kind: "bbox", coordinates: [1, 2, 3, 4] });
    expect(decode("bbox=1,2,3,4,5,6").shape).toMatchObject({ coordinates: [1, 2, 3, 4, 5, 6] });
    expect(reason("bbox=1,2,3")).toBe(`Invalid bounding box value for bbox: '"1,2,3"'`);
    expect(reason("bbox=1,2,x,4")).toBe(`Invalid float value for bbox: '"x"'`);
  });
});

describe("decodeGeoQuery: values", () => {
  it("Erlang floats: decimals with digits on both sides, or integers", () => {
    for (const ok of ["1", "-1", "+1", "1.5", "-0.25", "1.5e3", "1.5E-3", "007"]) expect(decode(`lon=${encodeURIComponent(ok)}&lat=0&radius=1`).shape).toMatchObject({ x: Number(ok) });
    for (const bad of ["abc", ".5", "1.", "1e5", " 1", "1.5x", "NaN", "Infinity", "0x10", "", "1.0e999"]) {
      expect(reason(`lat=${encodeURIComponent(bad)}&lon=1&radius=1`)).toBe(`Invalid float value for lat: '${JSON.stringify(bad)}'`);
    }
  });

  it("the first bad value in query-string order is the error", () => {
    expect(reason("radius=q&lat=abc&lon=1")).toBe(`Invalid float value for radius: '"q"'`);
    expect(reason("include_docs=yes&limit=x&bbox=1,2,3,4")).toBe(`Invalid boolean value for include_docs: '"yes"'`);
  });

  it("limit: default 25, at most max_limit", () => {
    expect(decode("bbox=1,2,3,4").limit).toBe(25);
    expect(decode("bbox=1,2,3,4&limit=200").limit).toBe(200);
    expect(reason("bbox=1,2,3,4&limit=201")).toBe("Limit must be less than or equal to 200");
    expect(reason("bbox=1,2,3,4&limit=11", { maxLimit: 10 })).toBe("Limit must be less than or equal to 10");
    expect(reason("bbox=1,2,3,4&limit=-1")).toBe(`Invalid positive integer value for limit: '"-1"'`);
    expect(reason("bbox=1,2,3,4&limit=2.5")).toBe(`Invalid positive integer value for limit: '"2.5"'`);
  });

  it("skip (alias startIndex), booleans, stale", () => {
    const q = decode("bbox=1,2,3,4&skip=5&include_docs=true&include_geoms=false&nearest=true&stale=update_after");
    expect(q).toMatchObject({ skip: 5, includeDocs: true, includeGeoms: false, nearest: true, stale: "update_after" });
    expect(decode("bbox=1,2,3,4&startIndex=7").skip).toBe(7);
    expect(decode("bbox=1,2,3,4&stale=ok").stale).toBe("ok");
    expect(decode("bbox=1,2,3,4&stale=true").stale).toBe("ok");
    expect(decode("bbox=1,2,3,4&stale=false").stale).toBe(false);
    expect(reason("bbox=1,2,3,4&stale=later")).toBe(`Invalid boolean value for stale: '"later"'`);
    expect(reason("bbox=1,2,3,4&skip=-2")).toBe(`Invalid positive integer value for skip: '"-2"'`);
  });

  it("defaults", () => {
    expect(decode("bbox=1,2,3,4")).toMatchObject({
      relation: "none",
      nearest: false,
      limit: 25,
      skip: 0,
      stale: false,
      stable: false,
      includeDocs: false,
      includeGeoms: true,
      format: "view",
      wrap: false,
      geodesic: false,
    });
    expect(decode("bbox=1,2,3,4").bookmark.size).toBe(0);
  });

  it("for everything but the geometry, the last occurrence wins", () => {
    expect(decode("bbox=1,2,3,4&limit=5&limit=7").limit).toBe(7);
    expect(decode("bbox=1,2,3,4&relation=within&filter=touches").relation).toBe("touches");
    expect(decode("bbox=1,2,3,4&format=legacy&format=geojson").format).toBe("geojson");
  });

  it("unknown parameters and empty names are ignored", () => {
    expect(decode("bbox=1,2,3,4&foo=bar&=x&callback=y").limit).toBe(25);
  });

  it("a record of strings works as well as URLSearchParams", () => {
    const r = decodeGeoQuery({ bbox: "1,2,3,4", limit: ["3", "4"], skip: undefined });
    expect(isRight(r) && r.right.limit).toBe(4);
  });

  it("temporal and srid parameters are validated", () => {
    expect(reason("bbox=1,2,3,4&start=soon")).toBe(`Invalid float value for start: '"soon"'`);
    expect(reason("bbox=1,2,3,4&vbox=1,2")).toBe(`Invalid bounding box value for vbox: '"1,2"'`);
    expect(reason("bbox=1,2,3,4&stable=1")).toBe(`Invalid boolean value for stable: '"1"'`);
    expect(decode("bbox=1,2,3,4&srid=urn:ogc:def:crs:EPSG::4326").limit).toBe(25);
    expect(reason("bbox=1,2,3,4&srid=urn:ogc:def:crs:EPSG::3857")).toMatch(/^Unsupported srid: .*EPSG::4326 only$/);
  });

  it("the bookmark is decoded when the query is", () => {
    expect(reason("bbox=1,2,3,4&bookmark=nonsense")).toBe(`Invalid bookmark value for bookmark: '"nonsense"'`);
    const bookmark = encodeBookmark(new Map([["0", { distance: 1.5, id: "a", ordinal: 0 }]]));
    expect(decode(`bbox=1,2,3,4&bookmark=${bookmark}`).bookmark.get("0")).toEqual({ distance: 1.5, id: "a", ordinal: 0 });
  });
});

describe("decodeGeoQuery: relation", () => {
  it("defaults: bbox none, other geometries intersects, nearest none", () => {
    expect(decode("bbox=1,2,3,4").relation).toBe("none");
    expect(decode("g=POINT(1 2)").relation).toBe("intersects");
    expect(decode("lon=1&lat=2&radius=3").relation).toBe("intersects");
    expect(decode("g=POINT(1 2)&nearest=true").relation).toBe("none");
    expect(decode("bbox=1,2,3,4&relation=contains").relation).toBe("contains");
    expect(decode("g=POINT(1 2)&nearest=true&filter=within").relation).toBe("within");
  });

  it("unknown names are refused", () => {
    expect(reason("bbox=1,2,3,4&relation=near")).toBe(`Invalid filter name value for relation: '"near"'`);
    expect(reason("bbox=1,2,3,4&filter=INTERSECTS")).toBe(`Invalid filter name value for filter: '"INTERSECTS"'`);
  });

  it("a 3D/4D bbox takes no relation", () => {
    expect(decode("bbox=1,2,3,4,5,6").relation).toBe("none");
    expect(decode("bbox=1,2,3,4,5,6&relation=none").relation).toBe("none");
    expect(reason("bbox=1,2,3,4,5,6,7,8&relation=intersects")).toBe("filter_with_md_bbox");
  });
});

describe("decodeGeoQuery: format", () => {
  it("format names, else an exact Accept value, else view", () => {
    expect(decode("bbox=1,2,3,4&format=geojson").format).toBe("geojson");
    expect(decode("bbox=1,2,3,4&format=application/vnd.geo%2Bjson").format).toBe("geojson");
    expect(decode("bbox=1,2,3,4&format=legacy").format).toBe("legacy");
    expect(decode("bbox=1,2,3,4", { accept: "application/vnd.geo+json" }).format).toBe("geojson");
    expect(decode("bbox=1,2,3,4", { accept: "application/json" }).format).toBe("view");
    expect(decode("bbox=1,2,3,4&format=view", { accept: "legacy" }).format).toBe("view");
    expect(decode("bbox=1,2,3,4", { defaultFormat: "legacy" }).format).toBe("legacy");
    expect(reason("bbox=1,2,3,4&format=xml")).toBe(`Invalid format name value for format: '"xml"'`);
  });
});

describe("decodeGeoQuery: upholster extensions", () => {
  it("wrap and geodesic are off by default and opt-in", () => {
    expect(decode("bbox=170,-10,-170,10&wrap=true").wrap).toBe(true);
    expect(decode("lon=1&lat=2&radius=3&geodesic=true").geodesic).toBe(true);
    expect(reason("bbox=1,2,3,4&wrap=maybe")).toBe(`Invalid boolean value for wrap: '"maybe"'`);
  });

  it("combinations they do not support are refused", () => {
    expect(reason("g=POINT(1 2)&wrap=true")).toBe("wrap=true applies to bbox queries without nearest=true");
    expect(reason("bbox=1,2,3,4&wrap=true&nearest=true")).toBe("wrap=true applies to bbox queries without nearest=true");
    expect(reason("g=POINT(1 2)&geodesic=true&nearest=true")).toBe("geodesic=true does not combine with nearest=true");
  });
});

describe("never throws", () => {
  const names = ["g", "geometry", "bbox", "x", "y", "r", "lat", "lon", "radius", "rangex", "rangey", "x_range", "y_range", "relation", "filter", "nearest", "limit", "skip", "startIndex", "bookmark", "stale", "stable", "include_docs", "include_geoms", "format", "srid", "response_srid", "vbox", "start", "end", "wrap", "geodesic", "", "other"];
  const value = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("1", "1.5", "-0", "true", "false", "POINT(1 2)", "1,2,3,4", "polygon((0 0,1 0,1 1,0 0))", "GEOMETRYCOLLECTION(POINT(1 1))", "LINESTRING(0 0)", "POINT(1e400 0)", "POINT EMPTY", "((((", "ok"));

  it("decodes or answers a 400 query_parse_error for any parameters, and so does prepare", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(fc.constantFrom(...names), fc.string()), value), { maxLength: 8 }), fc.option(fc.string(), { nil: undefined }), (pairs, accept) => {
        const params = new URLSearchParams(pairs);
        const decoded = decodeGeoQuery(params, { accept });
        if (isLeft(decoded)) expect(decoded.left).toEqual({ status: 400, error: "query_parse_error", reason: expect.any(String) });
        const parsed = parseGeoRequest(params, { accept });
        if (isLeft(parsed)) expect(parsed.left).toEqual({ status: 400, error: "query_parse_error", reason: expect.any(String) });
      }),
      { numRuns: 1000 },
    );
  });

  it("arbitrary raw query strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (raw) => {
        const parsed = parseGeoRequest(new URLSearchParams(raw));
        if (isLeft(parsed)) expect(parsed.left.status).toBe(400);
      }),
      { numRuns: 500 },
    );
  });
});
