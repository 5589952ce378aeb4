/**
 * The README's geo example, as a user runs it: `upholster run` (the memory
 * store and its document API), a design doc with `st_indexes` and docs
 * written over HTTP, then `_geo`, `_geo_info` and `_geo_cleanup` over HTTP,
 * answered by the runtime's own geo indexes (built in the background, or
 * by the query waiting for the db's seq).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { killStarted, listeningUrl, upholster } from "../support/cli.js";

afterEach(killStarted);

const DOCS = [
  { _id: "boston", type: "Feature", geometry: { type: "Point", coordinates: [-71.06, 42.36] }, properties: { name: "Boston" } },
  { _id: "cambridge", type: "Feature", geometry: { type: "Point", coordinates: [-71.11, 42.37] }, properties: { name: "Cambridge" } },
  { _id: "nyc", type: "Feature", geometry: { type: "Point", coordinates: [-74.0, 40.71] }, properties: { name: "New York" } },
  {
    _id: "mass",
    type: "Feature",
    geometry: { type: "Polygon", coordinates: [[[-72, 42], [-70, 42], [-70, 43], [-72, 43], [-72, 42]]] },
    properties: { name: "a box around Boston" },
  },
];

let url = "";
let config = "";
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), "upholster-geo-cli-"));
  config = join(dir, "upholster.ini");
  writeFileSync(config, `[upholster]\nstate_dir = ${join(dir, "state")}\n\n[fabric]\nindex_updater_delay_msec = 50\n`);
});

const send = (method: string, path: string, body?: unknown) =>
  fetch(`${url}${path}`, { method, headers: { "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
const ids = async (path: string): Promise<string[]> => {
  const response = await fetch(`${url}${path}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { rows: { id: string }[] }).rows.map((row) => row.id);
};

describe("geo over upholster's HTTP API (the README example)", () => {
  it("indexes the docs written over HTTP and answers _geo, _geo_info and _geo_cleanup", async () => {
    url = await listeningUrl(upholster(["run", "--port", "0", "--no-demo", "--log-level", "warn", "--config", config]));
    expect((await send("PUT", "/places")).status).toBe(201);
    const ddoc = { st_indexes: { points: { index: "function(doc){ if (doc.geometry) st_index(doc.geometry); }" } } };
    expect((await send("PUT", "/places/_design/geo", ddoc)).status).toBe(201);
    expect((await send("POST", "/places/_bulk_docs", { docs: DOCS })).status).toBe(201);
    const G = "/places/_design/geo/_geo/points";

    // Ordered by centroid distance from the query's centroid (-71, 42.5), then id.
    expect(await ids(`${G}?bbox=-72,42,-70,43`)).toEqual(["mass", "boston", "cambridge"]);
    expect((await ids(`${G}?lat=42.36&lon=-71.06&radius=5000`)).sort()).toEqual(["boston", "cambridge", "mass"]);
    // A polygon contains itself; "properly" leaves out what touches its boundary.
    const box = "POLYGON((-72%2042,-70%2042,-70%2043,-72%2043,-72%2042))";
    expect((await ids(`${G}?g=${box}&relation=contains`)).sort()).toEqual(["boston", "cambridge", "mass"]);
    expect((await ids(`${G}?g=${box}&relation=contains_properly`)).sort()).toEqual(["boston", "cambridge"]);
    expect(await ids(`${G}?g=POINT(-73%2041)&nearest=true&limit=2`)).toEqual(["nyc", "cambridge"]);

    // Bookmarks page through exactly the unpaged result.
    const all = await ids(`${G}?bbox=-75,40,-70,43`);
    const paged: string[] = [];
    let bookmark = "";
    for (let page = 0; page < 4; page++) {
      const body = (await (await fetch(`${url}${G}?bbox=-75,40,-70,43&limit=2${bookmark}`)).json()) as { bookmark: string; rows: { id: string }[] };
      paged.push(...body.rows.map((row) => row.id));
      bookmark = `&bookmark=${encodeURIComponent(body.bookmark)}`;
    }
    expect(paged).toEqual(all);
    expect(all).toHaveLength(4);

    const geojson = (await (await fetch(`${url}${G}?bbox=-72,42,-70,43&format=geojson&include_docs=true&limit=1`)).json()) as Record<string, unknown>;
    expect(geojson).toMatchObject({ type: "FeatureCollection", features: [{ _id: "mass", type: "Feature", properties: { name: "a box around Boston" } }] });

    const info = (await (await fetch(`${url}/places/_design/geo/_geo_info/points`)).json()) as { name: string; geo_index: Record<string, number> };
    expect(info.name).toBe("_design/geo/points");
    expect(info.geo_index).toMatchObject({ doc_count: 4 });
    expect(info.geo_index["disk_size"]).toBeGreaterThan(0);

    const badLimit = await fetch(`${url}${G}?bbox=0,0,1,1&limit=201`);
    expect(badLimit.status).toBe(400);
    expect(await badLimit.json()).toEqual({ error: "query_parse_error", reason: "Limit must be less than or equal to 200" });
    const missing = await fetch(`${url}/places/_design/geo/_geo/nope?bbox=0,0,1,1`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "not_found", reason: "Geospatial index 'nope' not found" });

    const cleanup = await send("POST", "/places/_geo_cleanup");
    expect(cleanup.status).toBe(202);
    expect(await cleanup.json()).toEqual({ ok: true });
    // The index is still in use: cleanup kept it.
    expect(await ids(`${G}?bbox=-72,42,-70,43`)).toEqual(["mass", "boston", "cambridge"]);
  });
});
