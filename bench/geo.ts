/**
 * bench:geo — the geo engine (GeoIndex + the pure core) against PostGIS on
 * the same data in the same run.
 *
 * Data (seeded): GEO_POINTS random points (default 1,000,000) and
 * GEO_POLYGONS small polygons (default a tenth of that, 0.01 to 0.2 degrees
 * across) over the whole world, one geometry per doc.
 *
 * 1. Build: every path in BUILD_PATHS indexes the docs from scratch and is
 *    timed, docs/s printed: GeoIndex.upsert of the geometries given (the
 *    engine alone), and the real path (sandbox-build.ts): the docs as
 *    CouchDB docs through the design doc's st_index function
 *    `function(doc){ if (doc.geometry) st_index(doc.geometry); }` in the
 *    QuickJS sandbox (worker thread), pages of 1,000 docs per run() call
 *    with 3 pages in flight as the view updater does, each page's
 *    geometries upserted while the next ones are in the sandbox (goal:
 *    >= 20,000 docs/s). The last path's index is the one queried.
 * 2. Queries, in-process: query string -> parseGeoRequest -> index.search,
 *    p50/p99 over GEO_QUERIES random queries per kind (the index then
 *    takes 1% more upserts, so its dynamic tier is in use, as while indexing):
 *      bbox      a 1x1 degree bbox (relation none, the default)
 *      radius    lon/lat/radius=100 km (hastings' 100-vertex ellipse, intersects)
 *      polygon   g=POLYGON(...) about 1x1 degree, relation intersects
 *      nearest   g=POINT(...)&nearest=true&limit=10
 *    once as built and once after compact().
 * 2b. The same queries over HTTP (http-timing.ts): upholster's server on
 *    loopback with the `_geo` routes over a GeoService wrapping this index,
 *    a keep-alive undici client in this process sending one request at a
 *    time, timed to the parsed JSON body (as PostGIS's client below times to
 *    its parsed rows).
 * 3. The same queries against PostGIS 15 (a private throwaway cluster, data
 *    bulk-loaded with COPY, GiST index, ANALYZE), timed from this client
 *    (prepared statements over loopback TCP), with hastings' semantics in
 *    SQL (top 25 by centroid distance then id) except nearest, which uses
 *    PostGIS's indexed kNN (`geom <-> point`, box distance): its fastest
 *    form. GEO_POSTGIS=0 skips this part.
 *
 * What the comparison does and does not even out: both sides run the same
 * query list (same seed) after a warm-up (200 queries in-process and over
 * HTTP, 50 for PostGIS), and both clients (undici, pg) run in this process,
 * so each side's figures include its client's CPU. Against upholster: its
 * HTTP pages carry each hit's geometry (hastings' default include_geoms)
 * while the SQL returns ids only, and PostGIS's nearest is its index kNN
 * without the id tie-break. The "as built" timings start right after a
 * million-doc build, while the garbage collector still marks that heap;
 * "after compact" is the steady state.
 *
 *   npm run bench:geo                      # full size (~3-4 minutes)
 *   GEO_POINTS=100000 npm run bench:geo    # quick
 */
import { writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { GeoIndex } from "../src/adapters/geo/index.js";
import { parseGeoRequest, type GeoJsonGeometry, type PreparedGeoQuery } from "../src/core/geo/index.js";
import { createRandom } from "../src/adapters/memory/random.js";
import { startPostgis, type PostgisCluster } from "../test/support/postgis.js";
import { buildThroughSandbox } from "./geo/sandbox-build.js";
import { startGeoHttp, timeOverHttp } from "./geo/http-timing.js";
import { nowUs, percentiles, type Latency } from "./geo/timing.js";

const POINTS = Number(process.env.GEO_POINTS ?? 1_000_000);
const POLYGONS = Number(process.env.GEO_POLYGONS ?? Math.round(POINTS / 10));
const QUERIES = Number(process.env.GEO_QUERIES ?? 2000);
const POSTGIS_QUERIES = Number(process.env.GEO_POSTGIS_QUERIES ?? Math.min(QUERIES, 1000));
const WITH_POSTGIS = process.env.GEO_POSTGIS !== "0";
const SEED = 20261121;

interface BenchDoc {
  readonly id: string;
  readonly geometry: GeoJsonGeometry;
}

const random = createRandom(SEED);
const rnd = (): number => random.next();
const between = (min: number, max: number): number => min + (max - min) * rnd();

function smallPolygon(): GeoJsonGeometry {
  const [cx, cy] = [between(-179.5, 179.5), between(-84.5, 84.5)];
  const radius = between(0.005, 0.1);
  const vertices = 4 + Math.floor(rnd() * 8);
  const ring = Array.from({ length: vertices }, (_, i) => {
    const angle = ((i + rnd() * 0.5) * 2 * Math.PI) / vertices;
    const r = radius * between(0.6, 1);
    return [cx + r * Math.cos(angle), cy + r * Math.sin(angle)];
  });
  return { type: "Polygon", coordinates: [[...ring, ring[0]!]] };
}

function makeDocs(): BenchDoc[] {
  const docs: BenchDoc[] = [];
  for (let i = 0; i < POINTS; i++) docs.push({ id: `p${i}`, geometry: { type: "Point", coordinates: [between(-180, 180), between(-85, 85)] } });
  for (let i = 0; i < POLYGONS; i++) docs.push({ id: `g${i}`, geometry: smallPolygon() });
  return docs;
}

/** One way of turning docs into a searchable index. */
interface BuildPath {
  readonly name: string;
  build(docs: readonly BenchDoc[]): GeoIndex | Promise<GeoIndex>;
}

const BUILD_PATHS: readonly BuildPath[] = [
  {
    name: "GeoIndex.upsert (geometries given), then flush() (the trees; else the first search does it)",
    build: (docs) => {
      const index = new GeoIndex();
      for (const doc of docs) index.upsert(doc.id, "1-a", [doc.geometry]);
      index.flush();
      return index;
    },
  },
  {
    name: "CouchDB docs through st_index in the QuickJS sandbox (worker), then GeoIndex.upsert, then flush()",
    build: (docs) => buildThroughSandbox(docs),
  },
];

type QueryKind = "bbox" | "radius" | "polygon" | "nearest";
const KINDS: readonly QueryKind[] = ["bbox", "radius", "polygon", "nearest"];

interface BenchQuery {
  readonly params: string;
  /** Parameters of the PostGIS statement for this query. */
  readonly sqlArgs: readonly (string | number)[];
}

const polygonWkt = (cx: number, cy: number): string => {
  const ring = Array.from({ length: 8 }, (_, i) => {
    const angle = (i * 2 * Math.PI) / 8;
    return `${cx + 0.5 * Math.cos(angle) * between(0.8, 1.2)} ${cy + 0.5 * Math.sin(angle) * between(0.8, 1.2)}`;
  });
  return `POLYGON((${[...ring, ring[0]].join(", ")}))`;
};

function preparedWkt(prepared: PreparedGeoQuery): string {
  return `POLYGON((${prepared.geometry
    .getCoordinates()
    .map((c) => `${c.x} ${c.y}`)
    .join(", ")}))`;
}

function makeQuery(kind: QueryKind): BenchQuery {
  const [x, y] = [between(-179, 178), between(-84, 83)];
  switch (kind) {
    case "bbox":
      return { params: `bbox=${x},${y},${x + 1},${y + 1}`, sqlArgs: [x, y, x + 1, y + 1] };
    case "radius": {
      const params = `lon=${x}&lat=${y}&radius=100000`;
      return { params, sqlArgs: [preparedWkt(parsed(params))] };
    }
    case "polygon": {
      const wkt = polygonWkt(x, y);
      return { params: `g=${encodeURIComponent(wkt)}&relation=intersects`, sqlArgs: [wkt] };
    }
    case "nearest":
      return { params: `g=${encodeURIComponent(`POINT(${x} ${y})`)}&nearest=true&limit=10`, sqlArgs: [x, y] };
  }
}

function parsed(params: string): PreparedGeoQuery {
  const result = parseGeoRequest(new URLSearchParams(params));
  if (result._tag === "Left") throw new Error(`${params}: ${result.left.reason}`);
  return result.right;
}

const SQL: Record<QueryKind, string> = {
  bbox: `SELECT id FROM docs WHERE geom && ST_MakeEnvelope($1, $2, $3, $4, 4326)
         ORDER BY ST_Distance(ST_Centroid(ST_MakeEnvelope($1, $2, $3, $4, 4326)), ST_Centroid(geom)), id LIMIT 25`,
  radius: `WITH q AS (SELECT ST_GeomFromText($1, 4326) AS g)
           SELECT id FROM docs, q WHERE geom && q.g AND ST_Intersects(q.g, geom)
           ORDER BY ST_Distance(ST_Centroid(q.g), ST_Centroid(geom)), id LIMIT 25`,
  polygon: `WITH q AS (SELECT ST_GeomFromText($1, 4326) AS g)
            SELECT id FROM docs, q WHERE geom && q.g AND ST_Intersects(q.g, geom)
            ORDER BY ST_Distance(ST_Centroid(q.g), ST_Centroid(geom)), id LIMIT 25`,
  nearest: `SELECT id FROM docs ORDER BY geom <-> ST_SetSRID(ST_MakePoint($1, $2), 4326) LIMIT 10`,
};

function timeInProcess(index: GeoIndex, queries: readonly BenchQuery[]): Latency {
  let hits = 0;
  for (const q of queries.slice(0, 200)) index.search(parsed(q.params)); // warm-up
  const samples: number[] = [];
  for (const [i, q] of queries.entries()) {
    const start = nowUs();
    const page = index.search(parsed(q.params));
    samples.push(nowUs() - start);
    // Hits counted over the queries PostGIS also runs, so the means compare.
    if (i < POSTGIS_QUERIES) hits += page.hits.length;
  }
  return { ...percentiles(samples, 0), meanHits: hits / Math.min(queries.length, POSTGIS_QUERIES) };
}

interface PostgisTiming {
  readonly latency: Latency;
  /** Queries (of the timed ones) whose ids, in order, equal upholster's; undefined for nearest (PostGIS orders by box distance there). */
  readonly agreeing: number | undefined;
}

async function timePostgis(cluster: PostgisCluster, index: GeoIndex, kind: QueryKind, queries: readonly BenchQuery[]): Promise<PostgisTiming> {
  // Named statements, but planned for each call's values: a generic plan would
  // re-parse the WKT parameter for every row (20x slower, not PostGIS's best).
  await cluster.client.query("SET plan_cache_mode = force_custom_plan");
  const run = (q: BenchQuery) => cluster.client.query<{ id: string }>({ name: `geo-${kind}`, text: SQL[kind], values: [...q.sqlArgs] });
  for (const q of queries.slice(0, 50)) await run(q);
  let hits = 0;
  let agreeing = 0;
  const samples: number[] = [];
  for (const q of queries.slice(0, POSTGIS_QUERIES)) {
    const start = nowUs();
    const result = await run(q);
    samples.push(nowUs() - start);
    hits += result.rowCount ?? 0;
    const ours = index.search(parsed(q.params)).hits.map((h) => h.id);
    if (ours.join("\n") === result.rows.map((row) => row.id).join("\n")) agreeing++;
  }
  return { latency: percentiles(samples, hits), agreeing: kind === "nearest" ? undefined : agreeing };
}

async function loadPostgis(docs: readonly BenchDoc[]): Promise<{ cluster: PostgisCluster; loadMs: number; indexMs: number }> {
  const cluster = await startPostgis();
  const file = join(cluster.dir, "docs.tsv");
  const lines = docs.map((doc) => {
    const g = doc.geometry;
    const wkt =
      g.type === "Point"
        ? `POINT(${g.coordinates[0]} ${g.coordinates[1]})`
        : `POLYGON((${(g.type === "Polygon" ? g.coordinates[0]! : []).map((p) => `${p[0]} ${p[1]}`).join(", ")}))`;
    return `${doc.id}\tSRID=4326;${wkt}`;
  });
  writeFileSync(file, lines.join("\n") + "\n");
  chmodSync(file, 0o644);
  await cluster.client.query('CREATE TABLE docs (id text COLLATE "C" NOT NULL, geom geometry(Geometry, 4326) NOT NULL)');
  let start = performance.now();
  await cluster.client.query(`COPY docs (id, geom) FROM '${file}'`);
  const loadMs = performance.now() - start;
  start = performance.now();
  await cluster.client.query("CREATE INDEX docs_geom ON docs USING gist (geom)");
  await cluster.client.query("ANALYZE docs");
  return { cluster, loadMs, indexMs: performance.now() - start };
}

const fmt = (us: number): string => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} us`);

async function main(): Promise<void> {
  console.log(`bench:geo  ${POINTS.toLocaleString()} points + ${POLYGONS.toLocaleString()} polygons, ${QUERIES} queries per kind (PostGIS: ${WITH_POSTGIS ? POSTGIS_QUERIES : "skipped"})`);
  const docs = makeDocs();
  let index: GeoIndex | undefined;
  for (const path of BUILD_PATHS) {
    const heapBefore = process.memoryUsage().heapUsed;
    const start = performance.now();
    index = await path.build(docs);
    const ms = performance.now() - start;
    const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
    const docsPerSecond = Math.round(docs.length / (ms / 1000)).toLocaleString("en-US");
    console.log(
      `build  ${path.name}: ${(ms / 1000).toFixed(2)} s, ${docsPerSecond} docs/s (${((ms * 1000) / docs.length).toFixed(2)} us/doc, ~${heapMb.toFixed(0)} MB heap; ${index.docCount.toLocaleString("en-US")} docs indexed)`,
    );
  }
  if (index === undefined) return;
  // Updates after the build, as an index under a changes feed sees: they land in the dynamic tier.
  for (const doc of docs.slice(0, Math.round(docs.length / 100))) index.upsert(doc.id, "2-b", [doc.geometry]);
  index.flush();
  const queries = new Map(KINDS.map((kind) => [kind, Array.from({ length: QUERIES }, () => makeQuery(kind))]));
  const asBuilt = new Map(KINDS.map((kind) => [kind, timeInProcess(index, queries.get(kind)!)]));
  const start = performance.now();
  index.compact();
  console.log(`compact: ${(performance.now() - start).toFixed(0)} ms; sizes ${JSON.stringify(index.sizes())}`);
  const compacted = new Map(KINDS.map((kind) => [kind, timeInProcess(index, queries.get(kind)!)]));
  const http = await startGeoHttp(index);
  const overHttp = new Map<QueryKind, Latency>();
  try {
    for (const kind of KINDS) overHttp.set(kind, await timeOverHttp(http, queries.get(kind)!.map((q) => q.params)));
  } finally {
    await http.close();
  }

  let postgis: Map<QueryKind, PostgisTiming> | undefined;
  if (WITH_POSTGIS) {
    const { cluster, loadMs, indexMs } = await loadPostgis(docs);
    console.log(`PostGIS: COPY ${(loadMs / 1000).toFixed(2)} s, GiST index + ANALYZE ${(indexMs / 1000).toFixed(2)} s`);
    try {
      postgis = new Map();
      for (const kind of KINDS) postgis.set(kind, await timePostgis(cluster, index, kind, queries.get(kind)!));
    } finally {
      await cluster.stop();
    }
  }

  console.log("\nquery     upholster as built (p50 / p99)   after compact (p50 / p99)   PostGIS (p50 / p99)     p50 ratio  mean hits (PostGIS)  same ids as PostGIS");
  console.log("          (query string to page, in-process)                          (SQL round trip)         (built/compacted)");
  for (const kind of KINDS) {
    const a = asBuilt.get(kind)!;
    const c = compacted.get(kind)!;
    const p = postgis?.get(kind);
    const ratio = p === undefined ? "-" : `${(p.latency.p50Us / a.p50Us).toFixed(0)}x/${(p.latency.p50Us / c.p50Us).toFixed(0)}x`;
    const agreement = p?.agreeing === undefined ? "-" : `${p.agreeing}/${POSTGIS_QUERIES}`;
    console.log(
      `${kind.padEnd(9)} ${`${fmt(a.p50Us)} / ${fmt(a.p99Us)}`.padEnd(32)} ${`${fmt(c.p50Us)} / ${fmt(c.p99Us)}`.padEnd(27)} ${
        p === undefined ? "-".padEnd(23) : `${fmt(p.latency.p50Us)} / ${fmt(p.latency.p99Us)}`.padEnd(23)
      } ${ratio.padEnd(10)} ${`${a.meanHits.toFixed(1)}${p === undefined ? "" : ` (${p.latency.meanHits.toFixed(1)})`}`.padEnd(20)} ${agreement}`,
    );
  }
  printHttpTable(overHttp, postgis);
}

/** Over HTTP against PostGIS over its own protocol; a ratio above 1x means upholster answers sooner. */
function printHttpTable(overHttp: ReadonlyMap<QueryKind, Latency>, postgis: ReadonlyMap<QueryKind, PostgisTiming> | undefined): void {
  console.log("\nquery     upholster over HTTP (p50 / p99)   PostGIS (p50 / p99)     PostGIS/upholster p50   p99");
  console.log("          (GET _geo, keep-alive, to parsed JSON) (SQL round trip)      (goal: >= 1x)");
  for (const kind of KINDS) {
    const h = overHttp.get(kind)!;
    const p = postgis?.get(kind)?.latency;
    const ratio = (a: number | undefined, b: number): string => (a === undefined ? "-" : `${(a / b).toFixed(2)}x`);
    console.log(
      `${kind.padEnd(9)} ${`${fmt(h.p50Us)} / ${fmt(h.p99Us)}`.padEnd(33)} ${(p === undefined ? "-" : `${fmt(p.p50Us)} / ${fmt(p.p99Us)}`).padEnd(23)} ${ratio(p?.p50Us, h.p50Us).padEnd(23)} ${ratio(p?.p99Us, h.p99Us)}`,
    );
  }
}

await main();
