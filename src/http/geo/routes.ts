/**
 * hastings' (Cloudant Geo's) HTTP API on upholster's server, served from a
 * `GeoService`:
 *
 *   GET  /{db}/_design/{ddoc}/_geo/{index}       search (search.ts)
 *   GET  /{db}/_design/{ddoc}/_geo_info/{index}  the index's info
 *   POST /{db}/_geo_cleanup                      202 {"ok":true}
 *
 * Every route is for readers of the db, as CouchDB authorizes any db path
 * but `_compact` and `_view_cleanup` (hastings' cleanup is not on that
 * list). Other methods: CouchDB's 405 ("Only GET allowed"), as hastings'
 * `send_method_not_allowed`.
 */
import type { GeoService } from "../../ports/geo.js";
import { sendJson } from "../respond.js";
import { routeTable, type MethodHandler } from "../router.js";
import type { RouteHandler } from "../types.js";
import { dbAccess, dbPath } from "../documents/db-route.js";
import { answeringGeoErrors, dbOf, indexRefOf } from "./request-target.js";
import { searchHandler } from "./search.js";

export function geoRoutes(service: GeoService): RouteHandler {
  return routeTable([
    { path: dbPath("/_design/([^/]+)/_geo/([^/]+)"), access: dbAccess, methods: { GET: searchHandler(service) } },
    { path: dbPath("/_design/([^/]+)/_geo_info/([^/]+)"), access: dbAccess, methods: { GET: infoHandler(service) } },
    { path: dbPath("/_geo_cleanup"), access: dbAccess, methods: { POST: cleanupHandler(service) } },
  ]);
}

const infoHandler =
  (service: GeoService): MethodHandler =>
  (ctx) =>
    answeringGeoErrors(ctx.res, async () => {
      const ref = indexRefOf(ctx);
      if (ref === undefined) return;
      sendJson(ctx.res, 200, await service.info(ref));
    });

const cleanupHandler =
  (service: GeoService): MethodHandler =>
  (ctx) =>
    answeringGeoErrors(ctx.res, async () => {
      // hastings reads no body; drain any so the connection stays usable.
      ctx.req.resume();
      const db = dbOf(ctx);
      if (db === undefined) return;
      await service.cleanup(db);
      sendJson(ctx.res, 202, { ok: true });
    });
