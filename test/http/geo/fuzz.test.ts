/**
 * Fuzzing the `_geo` query string over HTTP: random and malformed parameter
 * lists (names from hastings' list and upholster's, plus junk; values that
 * are numbers of every size, NaN and infinities, broken WKT, bboxes with the
 * wrong count, unicode, empty, repeated names; raw `%` escapes and
 * separators) and random Accept headers never give a 5xx, and always give a
 * JSON body: a page (200) or hastings' `{"error","reason"}` (400).
 * fast-check with the suite's fixed seed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { startGeoServer, ADMIN, type GeoServer } from "./harness.js";
import { loadPlaces, SEARCH_PATH } from "./fixture.js";

const NAMES = [
  "g", "geometry", "bbox", "x", "y", "r", "x_range", "y_range", "lon", "lat", "radius", "rangex", "rangey",
  "nearest", "filter", "relation", "srid", "srs", "response_srid", "responseSrs", "vbox", "start", "end",
  "limit", "skip", "startIndex", "stale", "stable", "include_docs", "include_geoms", "bookmark", "format",
  "wrap", "geodesic",
];

const number = fc.oneof(
  fc.double().map(String),
  fc.integer().map(String),
  fc.constantFrom("NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e308", "9".repeat(400), "0.0", "-0", "+1.5", ".5", "1.", "1e5", "0x10", " 1", ""),
  fc.double({ min: -200, max: 200, noNaN: true }).map((n) => n.toFixed(3)),
);

const WKT_BITS = ["POINT", "point", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTIPOLYGON", "GEOMETRYCOLLECTION", "EMPTY", "(", ")", "((", "))", ",", " "];
const wkt = fc.oneof(
  fc.array(fc.oneof(fc.constantFrom(...WKT_BITS), number), { maxLength: 12 }).map((parts) => parts.join(" ")),
  fc.tuple(number, number).map(([x, y]) => `POINT(${x} ${y})`),
  fc
    .array(fc.tuple(number, number), { minLength: 0, maxLength: 6 })
    .map((points) => `POLYGON((${points.map(([x, y]) => `${x} ${y}`).join(", ")}))`),
  fc.constantFrom(
    "POLYGON((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 3 2, 3 3, 2 2))",
    "POLYGON((0 0, 10 10, 10 0, 0 10, 0 0))",
    "LINESTRING(0 0)",
    "POINT EMPTY",
    "POLYGON EMPTY",
    "GEOMETRYCOLLECTION(POINT(1 2), LINESTRING(0 0, 1 1))",
    "POINT(1 2 3 4)",
    "POINT Z (1 2 3)",
    "MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))",
  ),
);

const value = fc.oneof(
  number,
  wkt,
  fc.array(number, { maxLength: 9 }).map((parts) => parts.join(",")),
  fc.constantFrom("true", "false", "ok", "update_after", "none", "intersects", "within", "contains_properly", "geojson", "legacy", "view", "application/vnd.geo+json", "urn:ogc:def:crs:EPSG::4326"),
  fc.base64String({ maxLength: 60 }).map((s) => s.replace(/\+/g, "-").replace(/\//g, "_").replace(/=/g, "")),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ maxLength: 30 }),
);

/** Erlang floats that parse, extreme ones included: they reach the engine. */
const goodFloat = fc.oneof(
  fc.double({ min: -200, max: 200, noNaN: true }).map((n) => n.toFixed(4)),
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.constantFrom("0.0", "-0.0", "180.0", "-180.0", "90.0", "-90.0", "1.0e308", "-1.0e308", "1.0e-300", "1.0e30", "123456789012345678901234567890"),
);
const goodInteger = fc.oneof(fc.integer({ min: 0, max: 250 }).map(String), fc.constantFrom("0", "200", "9007199254740993", "99999999999999999999999"));
const goodWkt = fc.oneof(
  fc.tuple(goodFloat, goodFloat).map(([x, y]) => `POINT(${x} ${y})`),
  fc.array(fc.tuple(goodFloat, goodFloat), { minLength: 3, maxLength: 6 }).map((points) => {
    const ring = [...points, points[0]!].map(([x, y]) => `${x} ${y}`);
    return `POLYGON((${ring.join(", ")}))`;
  }),
  fc.array(fc.tuple(goodFloat, goodFloat), { minLength: 2, maxLength: 5 }).map((points) => `LINESTRING(${points.map(([x, y]) => `${x} ${y}`).join(", ")})`),
);

/** For each name, values that mostly decode: the fuzz then reaches the search, the relations and the formats. */
const TYPED: Readonly<Record<string, fc.Arbitrary<string>>> = {
  g: goodWkt,
  geometry: goodWkt,
  bbox: fc.array(goodFloat, { minLength: 4, maxLength: 4 }).map((n) => n.join(",")),
  vbox: fc.array(goodFloat, { minLength: 4, maxLength: 4 }).map((n) => n.join(",")),
  relation: fc.constantFrom("none", "intersects", "contains", "contains_properly", "covered_by", "covers", "crosses", "disjoint", "overlaps", "touches", "within"),
  format: fc.constantFrom("view", "geojson", "legacy", "application/vnd.geo+json"),
  stale: fc.constantFrom("ok", "update_after", "false", "true"),
  bookmark: fc.constant("WzEsW11d"),
  srid: fc.constant("urn:ogc:def:crs:EPSG::4326"),
  srs: fc.constant("urn:ogc:def:crs:EPSG::4326"),
  response_srid: fc.constant("urn:ogc:def:crs:EPSG::4326"),
  responseSrs: fc.constant("urn:ogc:def:crs:EPSG::4326"),
  limit: goodInteger,
  skip: goodInteger,
};
const BOOLEAN_NAMES = new Set(["nearest", "stable", "include_docs", "include_geoms", "wrap", "geodesic"]);
const typedValue = (n: string): fc.Arbitrary<string> =>
  (Object.hasOwn(TYPED, n) ? TYPED[n] : undefined) ?? (BOOLEAN_NAMES.has(n) ? fc.constantFrom("true", "false") : n === "filter" ? TYPED["relation"]! : goodFloat);

const name = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...NAMES) }, { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) });

/** One parameter, encoded; sometimes raw, so the server meets stray `%`, `&`, `=` and unencoded unicode. */
const parameter = name
  .chain((n) => fc.tuple(fc.constant(n), fc.oneof({ weight: 3, arbitrary: typedValue(n) }, { weight: 2, arbitrary: value }), fc.nat(9)))
  .map(([n, v, mode]) =>
    mode === 0 ? `${n}=${v}` : mode === 1 ? encodeURIComponent(n) : mode === 2 ? `${encodeURIComponent(n)}==${encodeURIComponent(v)}` : `${encodeURIComponent(n)}=${encodeURIComponent(v)}`,
  );

const GEOMETRY_NAMES = new Set(["g", "geometry", "bbox", "x", "y", "r", "x_range", "y_range", "lon", "lat", "radius", "rangex", "rangey"]);

/** One query geometry of every kind, extreme values included. */
const geometry = fc.oneof(
  goodWkt.map((g) => `g=${encodeURIComponent(g)}`),
  TYPED["bbox"]!.map((b) => `bbox=${b}`),
  fc.tuple(goodFloat, goodFloat, goodFloat).map(([x, y, r]) => `lon=${x}&lat=${y}&radius=${r}`),
  fc.tuple(goodFloat, goodFloat, goodFloat, goodFloat).map(([x, y, rx, ry]) => `x=${x}&y=${y}&x_range=${rx}&y_range=${ry}`),
);

/** Mostly decodable: one geometry and typed options (relations, nearest, paging, formats, wrap, geodesic). */
const wellFormed = fc
  .tuple(
    geometry,
    fc.array(
      fc.constantFrom(...NAMES.filter((n) => !GEOMETRY_NAMES.has(n))).chain((n) => typedValue(n).map((v) => `${n}=${encodeURIComponent(v)}`)),
      { maxLength: 5 },
    ),
  )
  .map(([g, options]) => [g, ...options].join("&"));

/** Anything: junk names and values, raw escapes, odd separators, sometimes after a valid geometry. */
const malformed = fc
  .tuple(
    fc.option(fc.constantFrom("bbox=-72,42,-70,43", "lat=42.36&lon=-71.06&radius=10000", "g=POINT(-71%2042)&nearest=true", "bbox=179,-20,-179,-10&wrap=true"), { nil: undefined }),
    fc.array(parameter, { maxLength: 6 }),
    fc.constantFrom("&", "&&", ";", "&&&"),
  )
  .map(([g, params, separator]) => [...(g === undefined ? [] : [g]), ...params].join(separator));

const queryString = fc.oneof(wellFormed, malformed);

const accept = fc.option(fc.oneof(fc.constantFrom("application/vnd.geo+json", "legacy", "geojson", "*/*", "text/html"), fc.string({ maxLength: 20 }).map((s) => s.replace(/[^\x20-\x7e]/g, ""))), {
  nil: undefined,
});

let geo: GeoServer;
beforeAll(async () => {
  geo = await startGeoServer();
  loadPlaces(geo.service);
});
afterAll(() => geo.server.close());

describe("fuzzed _geo query strings", () => {
  it("never get a 5xx, and always get a JSON body: a page or hastings' error", async () => {
    await fc.assert(
      fc.asyncProperty(queryString, accept, async (query, acceptHeader) => {
        const headers = acceptHeader === undefined ? ADMIN : { ...ADMIN, Accept: acceptHeader };
        const response = await fetch(`${geo.url}${SEARCH_PATH}?${query}`, { headers });
        const text = await response.text();
        expect(response.status, `${query} -> ${text}`).toBeLessThan(500);
        expect(response.headers.get("content-type")).toBe("application/json");
        const body = JSON.parse(text) as Record<string, unknown>;
        if (response.status === 200) expect(typeof body["bookmark"]).toBe("string");
        else {
          expect(response.status, `${query} -> ${text}`).toBe(400);
          expect(body).toEqual({ error: "query_parse_error", reason: expect.any(String) });
        }
      }),
      { numRuns: 3000 },
    );
  });
});
