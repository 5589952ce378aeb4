/**
 * `GET|POST /{db}/_design/{ddoc}/_view/{view}` and `GET
 * /{db}/_design/{ddoc}/_info`, delegating to the store's view engine (the
 * `ViewStore` port) with CouchDB 3.4's parameters (the view core's decoder) and
 * answers (fixtures 66-78): `{total_rows,offset,update_seq?,rows}` for map
 * views, `{rows}` reduced; its `ViewError`s as they are (404 `missing`,
 * `missing_named_view`, 400 `query_parse_error`, ...).
 *
 * A POST body is `{"keys": [...]}` plus any view parameter as JSON (the
 * query string wins); `queries` (multi-query) is refused. A store without a
 * view engine answers 501 `not_implemented`.
 */
import { isLeft, left, type Either } from "fp-ts/lib/Either.js";
import { decodeViewQuery } from "../../core/views/index.js";
import { ViewError, type ViewQuery, type ViewResult, type ViewStore } from "../../ports/views.js";
import { sendJson } from "../respond.js";
import { routeTable, type MethodHandler, type RouteContext } from "../router.js";
import type { RouteHandler } from "../types.js";
import { dbAccess, dbPath, withDb } from "./db-route.js";
import type { DocumentApi } from "./document-api.js";
import { badRequest, notSupported, sendHttpError, type HttpError } from "./errors.js";
import { MAX_JSON_DEPTH, nestedDeeperThan, readJsonObject, TOO_DEEP } from "./request-body.js";
import { sendRows } from "./rows-body.js";

export interface ViewRoutesOptions {
  readonly api: DocumentApi;
  /** The store's view engine; absent, view routes answer 501. */
  readonly views?: ViewStore | undefined;
}

const NO_VIEW_ENGINE: HttpError = { status: 501, error: "not_implemented", reason: "this store has no view engine" };

export function viewRoutes(options: ViewRoutesOptions): RouteHandler {
  const query: MethodHandler = (ctx) => queryView(options, ctx);
  const info: MethodHandler = (ctx) => groupInfo(options, ctx);
  return routeTable([
    { path: dbPath("/_design/([^/]+)/_view/([^/]+)"), access: dbAccess, methods: { GET: query, POST: query, HEAD: query } },
    { path: dbPath("/_design/([^/]+)/_info"), access: dbAccess, methods: { GET: info } },
  ]);
}

const ddocIdOf = (ctx: RouteContext): string => `_design/${ctx.params[1] ?? ""}`;

async function queryView(options: ViewRoutesOptions, ctx: RouteContext): Promise<void> {
  await withDb(options.api, ctx, async (_db, name) => {
    const query = await readQuery(ctx);
    if (isLeft(query)) return sendHttpError(ctx.res, query.left);
    if (nestedDeeperThan(query.right, MAX_JSON_DEPTH)) return sendHttpError(ctx.res, TOO_DEEP);
    await answeringViewErrors(ctx, options.views, async (views) => {
      const result = await views.queryView(name, ddocIdOf(ctx), ctx.params[2] ?? "", query.right);
      sendRows(ctx.res, headOf(result), result.rows);
    });
  });
}

async function groupInfo(options: ViewRoutesOptions, ctx: RouteContext): Promise<void> {
  await withDb(options.api, ctx, async (_db, name) => {
    await answeringViewErrors(ctx, options.views, async (views) => {
      sendJson(ctx.res, 200, await views.viewGroupInfo(name, ddocIdOf(ctx)));
    });
  });
}

/** CouchDB's head members, in its order; reduced results have none. */
function headOf(result: ViewResult): Record<string, unknown> {
  const head: Record<string, unknown> = {};
  if (result.total_rows !== undefined) head["total_rows"] = result.total_rows;
  if (result.offset !== undefined) head["offset"] = result.offset;
  if (result.update_seq !== undefined) head["update_seq"] = result.update_seq;
  return head;
}

/** GET: the query string. POST: `keys` (must be an array) and other parameters from the body, then the query string. */
async function readQuery(ctx: RouteContext): Promise<Either<HttpError, ViewQuery>> {
  if (ctx.req.method !== "POST") return decodeViewQuery(ctx.url.searchParams);
  const body = await readJsonObject(ctx.req);
  if (isLeft(body)) return body;
  if (body.right["queries"] !== undefined) return left(notSupported("queries (several queries in one request)"));
  if (body.right["keys"] !== undefined && !Array.isArray(body.right["keys"])) return left(badRequest("`keys` body member must be an array."));
  return decodeViewQuery(ctx.url.searchParams, body.right);
}

/** The view engine's `ViewError`s answered as they are; 501 without an engine. */
async function answeringViewErrors(ctx: RouteContext, views: ViewStore | undefined, use: (views: ViewStore) => Promise<void>): Promise<void> {
  if (views === undefined) return sendHttpError(ctx.res, NO_VIEW_ENGINE);
  try {
    await use(views);
  } catch (failure) {
    if (!(failure instanceof ViewError) || ctx.res.headersSent) throw failure;
    sendHttpError(ctx.res, { status: failure.status, error: failure.error, reason: failure.reason });
  }
}
