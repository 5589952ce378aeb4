/**
 * bench:geo over HTTP: upholster's own server (createHttpServer, the
 * `_geo` routes) on loopback over a GeoService that wraps the bench's
 * GeoIndex, and a keep-alive undici client in this process sending one
 * request at a time, each timed to its parsed JSON body. No admins are
 * configured (CouchDB's "admin party"): the guard admits without checking
 * a password, so what is timed is the geo API, not PBKDF2.
 */
import { Agent, request } from "undici";
import type { GeoIndex } from "../../src/adapters/geo/index.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { createGuard, type Authenticator } from "../../src/http/auth/index.js";
import { geoRoutes } from "../../src/http/geo/index.js";
import { createHttpServer } from "../../src/http/server.js";
import { GeoError, type GeoService } from "../../src/ports/geo.js";
import { nowUs, percentiles, type Latency } from "./timing.js";

const SEARCH_PATH = "/bench/_design/geo/_geo/points";
const WARM_UP_QUERIES = 200;

const ADMIN_PARTY: Authenticator = { hasAdmins: () => false, authenticate: async () => null };

/** The one index, as `/bench/_design/geo/_geo/points`. */
function singleIndexService(index: GeoIndex): GeoService {
  const missing = (name: string): GeoError => new GeoError(404, "not_found", `Geospatial index '${name}' not found`);
  return {
    async search(ref, prepared) {
      if (ref.db !== "bench" || ref.ddoc !== "_design/geo" || ref.index !== "points") throw missing(ref.index);
      return { page: index.search(prepared), docs: () => undefined, indexSeq: 0 };
    },
    async info(ref) {
      throw missing(ref.index);
    },
    async cleanup() {},
  };
}

export interface GeoHttp {
  readonly url: string;
  readonly agent: Agent;
  close(): Promise<void>;
}

export async function startGeoHttp(index: GeoIndex): Promise<GeoHttp> {
  const server = createHttpServer({
    routes: [geoRoutes(singleIndexService(index))],
    guard: createGuard({ authenticator: ADMIN_PARTY }),
    nodeName: "upholster@127.0.0.1",
    logger: createRecordingLogger(),
  });
  const { url } = await server.listen();
  const agent = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 60_000 });
  return {
    url,
    agent,
    close: async () => {
      await agent.close();
      await server.close();
    },
  };
}

async function fetchRows(http: GeoHttp, params: string): Promise<number> {
  const response = await request(`${http.url}${SEARCH_PATH}?${params}`, { dispatcher: http.agent });
  const body = (await response.body.json()) as { rows?: unknown[]; reason?: string };
  if (response.statusCode !== 200 || body.rows === undefined) throw new Error(`${params}: ${response.statusCode} ${JSON.stringify(body)}`);
  return body.rows.length;
}

/** p50/p99 of the queries (query strings) sent one at a time. */
export async function timeOverHttp(http: GeoHttp, queries: readonly string[]): Promise<Latency> {
  for (const params of queries.slice(0, WARM_UP_QUERIES)) await fetchRows(http, params);
  const samples: number[] = [];
  let hits = 0;
  for (const params of queries) {
    const start = nowUs();
    hits += await fetchRows(http, params);
    samples.push(nowUs() - start);
  }
  return percentiles(samples, hits);
}
