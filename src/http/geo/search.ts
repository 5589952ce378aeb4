/**
 * `GET /{db}/_design/{ddoc}/_geo/{index}`: the query string (and the Accept
 * header, for the format) decoded by the core's `parseGeoRequest` into a
 * runnable query or its 400 `query_parse_error`; the service's page
 * formatted by `formatGeoResponse` with the docs the service fetched for
 * include_docs.
 *
 * The Content-Type is `application/json` whatever the format, geojson
 * included: hastings answers through `chttpd:send_json`, which always says
 * application/json, and clients written against Cloudant expect that.
 */
import { parseGeoRequest, formatGeoResponse } from "../../core/geo/index.js";
import type { GeoService } from "../../ports/geo.js";
import { sendError, sendJsonText } from "../respond.js";
import type { MethodHandler, RouteContext } from "../router.js";
import { answeringGeoErrors, indexRefOf } from "./request-target.js";

export const searchHandler =
  (service: GeoService): MethodHandler =>
  (ctx) =>
    answeringGeoErrors(ctx.res, () => search(service, ctx));

async function search(service: GeoService, ctx: RouteContext): Promise<void> {
  const ref = indexRefOf(ctx);
  if (ref === undefined) return;
  const parsed = parseGeoRequest(ctx.url.searchParams, { accept: acceptOf(ctx) });
  if (parsed._tag === "Left") return sendError(ctx.res, parsed.left.status, parsed.left.error, parsed.left.reason);
  const prepared = parsed.right;
  const answer = await service.search(ref, prepared);
  const { format, includeDocs } = prepared.query;
  // Without sendJson's replacer (it only rewrites infinite numbers, which a geo body cannot
  // hold: geometries are validated finite, docs come from JSON), JSON.stringify stays on its
  // fast path: a page of geometries serializes several times faster.
  sendJsonText(ctx.res, 200, `${JSON.stringify(formatGeoResponse(answer.page, { format, includeDocs }, answer.docs))}\n`);
}

/** One Accept value as hastings compares it (a repeated header is joined by node: then it matches no format name). */
const acceptOf = (ctx: RouteContext): string | undefined => ctx.req.headers.accept;
