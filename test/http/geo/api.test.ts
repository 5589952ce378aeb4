/**
 * `GET /{db}/_design/{ddoc}/_geo/{index}`, `_geo_info` and `_geo_cleanup`
 * over real HTTP: every parameter family reaches the engine as the core
 * decodes it (the answer equals the engine's own page, formatted), the
 * orders hastings gives on a small world, hastings' error texts, formats and
 * the Accept header, and the service's errors passed on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GeoError } from "../../../src/ports/geo.js";
import { call, startGeoServer, type GeoServer } from "./harness.js";
import { engineBody, INFO_PATH, loadPlaces, SEARCH_PATH } from "./fixture.js";

let geo: GeoServer;
beforeAll(async () => {
  geo = await startGeoServer();
  loadPlaces(geo.service);
});
afterAll(() => geo.server.close());

const search = (query: string, headers?: Record<string, string>) => call(geo.url, "GET", `${SEARCH_PATH}?${query}`, headers);

const rowIds = (body: unknown): string[] => (body as { rows: { id: string }[] }).rows.map((row) => row.id);

const BOSTON_SQUARE = encodeURIComponent("POLYGON((-72 42, -70 42, -70 43, -72 43, -72 42))");

describe("query geometries and relations: hastings' hits in (centroid distance, id) order", () => {
  it.each([
    ["bbox (relation none: bounding boxes only)", "bbox=-72,42,-70,43", ["mass", "boston", "cambridge", "route"]],
    ["bbox corners in any order", "bbox=-70,43,-72,42", ["mass", "boston", "cambridge", "route"]],
    ["lat/lon/radius (metres, intersects)", "lat=42.36&lon=-71.06&radius=10000", ["boston", "cambridge", "mass", "route"]],
    ["x/y/r", "x=-71.06&y=42.36&r=10000", ["boston", "cambridge", "mass", "route"]],
    ["ellipse rangex/rangey", "lon=-71.06&lat=42.36&rangex=10000&rangey=2000", ["boston", "cambridge", "mass", "route"]],
    ["ellipse x_range/y_range", "x=-71.06&y=42.36&x_range=10000&y_range=2000", ["boston", "cambridge", "mass", "route"]],
    ["g= WKT, lowercase keyword (intersects)", `g=${encodeURIComponent("point(-71.06 42.36)")}`, ["boston", "mass", "route"]],
    ["geometry= alias", `geometry=${encodeURIComponent("POINT(-71.06 42.36)")}`, ["boston", "mass", "route"]],
    ["relation=contains (query first: docs inside the query)", `g=${BOSTON_SQUARE}&relation=contains`, ["mass", "boston", "cambridge"]],
    ["filter= alias", `g=${BOSTON_SQUARE}&filter=contains`, ["mass", "boston", "cambridge"]],
    ["relation=within (docs that contain the query)", `g=${encodeURIComponent("POINT(-71.06 42.36)")}&relation=within`, ["boston", "mass"]],
    ["relation=disjoint (still within the query's box)", `g=${BOSTON_SQUARE}&relation=disjoint`, []],
    ["nearest=true, limit", `g=${encodeURIComponent("POINT(-71.06 42.36)")}&nearest=true&limit=3`, ["boston", "cambridge", "mass"]],
    ["limit and skip", "bbox=-72,42,-70,43&limit=2&skip=1", ["boston", "cambridge"]],
    ["startIndex (skip's alias)", "bbox=-72,42,-70,43&limit=2&startIndex=1", ["boston", "cambridge"]],
    ["hastings' bbox across the antimeridian: the band between", "bbox=179,-20,-179,-10", []],
    ["wrap=true: the bbox across the antimeridian", "bbox=179,-20,-179,-10&wrap=true", ["samoa", "fiji"]],
  ])("%s", async (_name, query, ids) => {
    const answer = await search(query);
    expect(answer.status).toBe(200);
    expect(rowIds(answer.json)).toEqual(ids);
    expect(answer.json).toEqual(engineBody(geo.service, query));
  });

  it.each([
    "relation=intersects",
    "relation=covered_by",
    "relation=covers",
    "relation=crosses",
    "relation=overlaps",
    "relation=touches",
    "relation=contains_properly",
    "relation=none",
  ])("every relation reaches the engine: %s", async (relation) => {
    const query = `g=${BOSTON_SQUARE}&${relation}`;
    const answer = await search(query);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(engineBody(geo.service, query));
  });

  it("geodesic=true: distances and the radius on the ellipsoid, as the engine gives them", async () => {
    const query = "lat=42.36&lon=-71.06&radius=10000&geodesic=true";
    const answer = await search(query);
    expect(answer.status).toBe(200);
    expect(rowIds(answer.json).slice(0, 2)).toEqual(["boston", "cambridge"]);
    expect(answer.json).toEqual(engineBody(geo.service, query));
  });

  it("accepts and ignores what has no effect here: vbox, start, end, stable, the EPSG:4326 srid, unknown parameters", async () => {
    const urn = encodeURIComponent("urn:ogc:def:crs:EPSG::4326");
    const query = `bbox=-72,42,-70,43&vbox=0,0,1,1&start=1.0&end=2&stable=true&srid=${urn}&response_srid=${urn}&srs=${urn}&responseSrs=${urn}&foo=bar&=x`;
    const answer = await search(query);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(engineBody(geo.service, "bbox=-72,42,-70,43"));
  });

  it("repeated parameters: the first query geometry counts, the last of anything else", async () => {
    expect(rowIds((await search("bbox=-72,42,-70,43&bbox=-1,51,1,52")).json)).toEqual(["mass", "boston", "cambridge", "route"]);
    expect(rowIds((await search("bbox=-72,42,-70,43&limit=1&limit=3")).json)).toHaveLength(3);
  });

  it("stale=ok and stale=update_after reach the service; by default the query waits", async () => {
    for (const [query, stale] of [["stale=ok", "ok"], ["stale=update_after", "update_after"], ["stale=false", false], ["", false]] as const) {
      expect((await search(`bbox=0,0,1,1&${query}`)).status).toBe(200);
      expect(geo.service.lastSearch?.prepared.query.stale).toBe(stale);
      expect(geo.service.lastSearch?.ref).toEqual({ db: "places", ddoc: "_design/geo", index: "points" });
    }
  });

  it("a design doc or index name with escaped characters is decoded", async () => {
    geo.service.defineIndex("places", "_design/a b", "i/j");
    const answer = await call(geo.url, "GET", "/places/_design/a%20b/_geo/i%2Fj?bbox=-72,42,-70,43");
    expect(answer.status).toBe(200);
    expect(rowIds(answer.json)).toEqual(["mass", "boston", "cambridge", "route"]);
  });
});

describe("formats, include_docs and include_geoms", () => {
  const BBOX = "bbox=-72,42,-70,43&limit=2";

  it("view (the default): {bookmark, rows: [{id, rev, geometry}]}", async () => {
    const answer = await search(BBOX);
    expect(answer.contentType).toBe("application/json");
    const body = answer.json as { bookmark: string; rows: unknown[] };
    expect(Object.keys(body)).toEqual(["bookmark", "rows"]);
    expect(body.rows[0]).toEqual({ id: "mass", rev: "1-f", geometry: { type: "Polygon", coordinates: [[[-72, 42], [-70, 42], [-70, 43], [-72, 43], [-72, 42]]] } });
    expect(typeof body.bookmark).toBe("string");
  });

  it("include_docs=true adds the doc; include_geoms=false nulls the geometry", async () => {
    const body = (await search(`${BBOX}&include_docs=true&include_geoms=false&skip=1`)).json as { rows: unknown[] };
    expect(body.rows[0]).toEqual({
      id: "boston",
      geometry: null,
      doc: { _id: "boston", _rev: "1-a", geometry: { type: "Point", coordinates: [-71.06, 42.36] }, type: "Feature", properties: { name: "Boston" } },
    });
  });

  it.each([
    ["format=geojson", "geojson"],
    ["format=application%2Fvnd.geo%2Bjson", "geojson"],
    ["format=legacy", "legacy"],
    ["format=view", "view"],
    ["format=geojson&include_docs=true", "geojson"],
    ["format=legacy&include_docs=true", "legacy"],
  ])("%s: the engine's body, as application/json (hastings' chttpd:send_json)", async (format) => {
    const answer = await search(`${BBOX}&${format}`);
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe("application/json");
    expect(answer.json).toEqual(engineBody(geo.service, `${BBOX}&${format}`));
  });

  it("geojson: a FeatureCollection of features with _id, geometry and properties", async () => {
    const body = (await search(`${BBOX}&format=geojson&include_docs=true&skip=1`)).json as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["bookmark", "type", "features"]);
    expect(body["type"]).toBe("FeatureCollection");
    expect((body["features"] as unknown[])[0]).toEqual({
      _id: "boston",
      geometry: { type: "Point", coordinates: [-71.06, 42.36] },
      _rev: "1-a",
      type: "Feature",
      properties: { name: "Boston" },
    });
  });

  it("the Accept header chooses the format when the query string does not", async () => {
    const geojson = await search(BBOX, { ...geoHeaders(), Accept: "application/vnd.geo+json" });
    expect(geojson.json).toEqual(engineBody(geo.service, `${BBOX}&format=geojson`));
    expect(geojson.contentType).toBe("application/json");
    expect((await search(BBOX, { ...geoHeaders(), Accept: "legacy" })).json).toEqual(engineBody(geo.service, `${BBOX}&format=legacy`));
    // Only an exact format name counts (hastings compares the header as a whole).
    expect((await search(BBOX, { ...geoHeaders(), Accept: "application/vnd.geo+json, */*" })).json).toEqual(engineBody(geo.service, BBOX));
    expect((await search(`${BBOX}&format=view`, { ...geoHeaders(), Accept: "application/vnd.geo+json" })).json).toEqual(engineBody(geo.service, BBOX));
  });
});

const geoHeaders = (): Record<string, string> => ({ Authorization: `Basic ${Buffer.from("boss:pw").toString("base64")}` });

describe("errors, as hastings words them", () => {
  it.each([
    ["", "No geometry query specified."],
    ["lat=42&lon=-71", "No geometry query specified."],
    ["limit=10", "No geometry query specified."],
    ["bbox=0,0,1,1&lat=1&lon=2&radius=3", "Multiple geometry queries specified."],
    ["bbox=0,0,1,1&g=POINT(1%202)", "Multiple geometry queries specified."],
    ["bbox=0,0,1,1&limit=201", "Limit must be less than or equal to 200"],
    ["bbox=0,0,1,1&limit=-1", `Invalid positive integer value for limit: '"-1"'`],
    ["bbox=0,0,1,1&skip=a", `Invalid positive integer value for skip: '"a"'`],
    ["lat=abc&lon=1&radius=2", `Invalid float value for lat: '"abc"'`],
    ["lat=NaN&lon=1&radius=2", `Invalid float value for lat: '"NaN"'`],
    ["lat=1e400&lon=1&radius=2", `Invalid float value for lat: '"1e400"'`],
    ["x=1&y=2&r=.5", `Invalid float value for r: '".5"'`],
    ["bbox=1,2,3", `Invalid bounding box value for bbox: '"1,2,3"'`],
    ["bbox=1,2,3,x", `Invalid float value for bbox: '"x"'`],
    ["bbox=0,0,1,1&relation=near", `Invalid filter name value for relation: '"near"'`],
    ["bbox=0,0,1,1&nearest=yes", `Invalid boolean value for nearest: '"yes"'`],
    ["bbox=0,0,1,1&include_docs=1", `Invalid boolean value for include_docs: '"1"'`],
    ["bbox=0,0,1,1&stale=maybe", `Invalid boolean value for stale: '"maybe"'`],
    ["bbox=0,0,1,1&format=xml", `Invalid format name value for format: '"xml"'`],
    ["bbox=0,0,1,1&bookmark=zzz", `Invalid bookmark value for bookmark: '"zzz"'`],
    ["g=POLYGON((", "Invalid WKT geometry: Unexpected `` at position 9 in `POLYGON((`"],
    ["g=GEOMETRYCOLLECTION(POINT(1%202))", "This method does not support GeometryCollection arguments"],
    ["bbox=0,0,0,1,1,1&relation=contains", "filter_with_md_bbox"],
    ["bbox=0,0,1,1&srid=4326", `Unsupported srid: "4326"; upholster indexes and answers in urn:ogc:def:crs:EPSG::4326 only`],
    ["g=POINT(1%202)&wrap=true", "wrap=true applies to bbox queries without nearest=true"],
    ["g=POINT(1%202)&nearest=true&geodesic=true", "geodesic=true does not combine with nearest=true"],
  ])("%s: 400 query_parse_error %s", async (query, reason) => {
    const answer = await search(query);
    expect(answer.status).toBe(400);
    expect(answer.contentType).toBe("application/json");
    expect(answer.json).toEqual({ error: "query_parse_error", reason });
  });

  it("404s: a missing index, design doc or db", async () => {
    expect(await call(geo.url, "GET", "/places/_design/geo/_geo/nope?bbox=0,0,1,1")).toMatchObject({
      status: 404,
      json: { error: "not_found", reason: "Geospatial index 'nope' not found" },
    });
    expect(await call(geo.url, "GET", "/places/_design/nope/_geo/points?bbox=0,0,1,1")).toMatchObject({ status: 404, json: { error: "not_found", reason: "missing" } });
    expect(await call(geo.url, "GET", "/nodb/_design/geo/_geo/points?bbox=0,0,1,1")).toMatchObject({
      status: 404,
      json: { error: "not_found", reason: "Database does not exist." },
    });
    expect(await call(geo.url, "GET", "/places/_design/geo/_geo_info/nope")).toMatchObject({
      status: 404,
      json: { error: "not_found", reason: "Geospatial index 'nope' not found" },
    });
  });

  it("a db name CouchDB would refuse: its 400", async () => {
    const answer = await call(geo.url, "GET", "/Places/_design/geo/_geo/points?bbox=0,0,1,1");
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: "illegal_database_name" });
  });

  it("other methods: CouchDB's 405", async () => {
    for (const method of ["POST", "PUT", "DELETE", "HEAD"]) {
      const answer = await call(geo.url, method, `${SEARCH_PATH}?bbox=0,0,1,1`);
      expect(answer.status).toBe(405);
      if (method !== "HEAD") expect(answer.json).toEqual({ error: "method_not_allowed", reason: "Only GET allowed" });
    }
    expect((await call(geo.url, "POST", INFO_PATH)).json).toEqual({ error: "method_not_allowed", reason: "Only GET allowed" });
    expect((await call(geo.url, "GET", "/places/_geo_cleanup")).json).toEqual({ error: "method_not_allowed", reason: "Only POST allowed" });
  });

  it("the service's own failures pass on as they are (503, 500); a crash is the server's logged 500", async () => {
    geo.service.failNextWith(new GeoError(503, "service_unavailable", "the index is being opened"));
    expect(await search("bbox=0,0,1,1")).toMatchObject({ status: 503, json: { error: "service_unavailable", reason: "the index is being opened" } });
    geo.service.failNextWith(new GeoError(500, "unknown_error", "easton died"));
    expect(await call(geo.url, "GET", INFO_PATH)).toMatchObject({ status: 500, json: { error: "unknown_error", reason: "easton died" } });
    geo.service.failNextWith(new Error("boom"));
    expect(await search("bbox=0,0,1,1")).toMatchObject({ status: 500, json: { error: "unknown_error", reason: "boom" } });
    expect((await search("bbox=0,0,1,1")).status).toBe(200);
  });
});

describe("_geo_info and _geo_cleanup", () => {
  it("_geo_info: the name and the index's sizes", async () => {
    const answer = await call(geo.url, "GET", INFO_PATH);
    expect(answer.status).toBe(200);
    const engine = geo.service.engineOf({ db: "places", ddoc: "_design/geo", index: "points" });
    expect(answer.json).toEqual({
      name: "_design/geo/points",
      geo_index: {
        doc_count: 8,
        disk_size: engine.sizes().fileBytes,
        data_size: engine.sizes().dataBytes,
        signature: expect.any(String),
        update_seq: 9,
        updater_running: false,
        compact_running: false,
      },
    });
  });

  it("POST _geo_cleanup: 202 {ok: true}, a body or none; a missing db 404", async () => {
    expect(await call(geo.url, "POST", "/places/_geo_cleanup")).toMatchObject({ status: 202, json: { ok: true } });
    const withBody = await fetch(`${geo.url}/places/_geo_cleanup`, { method: "POST", headers: { ...geoHeaders(), "Content-Type": "application/json" }, body: "{}" });
    expect(withBody.status).toBe(202);
    expect(await withBody.json()).toEqual({ ok: true });
    expect(geo.service.cleanups).toEqual(["places", "places"]);
    expect(await call(geo.url, "POST", "/nodb/_geo_cleanup")).toMatchObject({ status: 404, json: { error: "not_found", reason: "Database does not exist." } });
  });
});
