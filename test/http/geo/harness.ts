/**
 * The `_geo` routes on upholster's real server over loopback, behind the
 * server's guard, served from a TestGeoService over the real engine. Users
 * as CouchDB's `_users` would have them: `boss` (server admin), `ann`
 * (reader of `places`), `bob` (reader of nothing).
 */
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createGuard, type DbSecurity } from "../../../src/http/auth/guard.js";
import { geoRoutes } from "../../../src/http/geo/index.js";
import { createHttpServer, type HttpServer } from "../../../src/http/server.js";
import { TestGeoService } from "../../support/geo-service.js";
import { userTableAuthenticator } from "../../support/user-table.js";

const authenticator = userTableAuthenticator({
  boss: { password: "pw", roles: ["_admin"] },
  ann: { password: "pw", roles: [] },
  bob: { password: "pw", roles: [] },
});

/** `_security`: ann reads `places`; other dbs are for admins only. */
const security: DbSecurity = { isReader: async (who, db) => db === "places" && who.name === "ann" };

export interface GeoServer {
  readonly url: string;
  readonly service: TestGeoService;
  readonly server: HttpServer;
}

export async function startGeoServer(service = new TestGeoService()): Promise<GeoServer> {
  const server = createHttpServer({
    routes: [geoRoutes(service)],
    guard: createGuard({ authenticator, dbSecurity: security }),
    nodeName: "upholster@127.0.0.1",
    logger: createRecordingLogger(),
  });
  const { url } = await server.listen();
  return { url, service, server };
}

export const authAs = (user: string, password = "pw"): Record<string, string> => ({
  Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`,
});

export const ADMIN = authAs("boss");

export interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
  readonly json: unknown;
}

/** One request (as the admin unless other headers are given); the body parsed when it is JSON. */
export async function call(base: string, method: string, path: string, headers: Record<string, string> = ADMIN): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { method, headers });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, contentType: response.headers.get("content-type"), text, json };
}
