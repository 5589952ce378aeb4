/**
 * Databases: `GET /_all_dbs`, and `PUT`/`GET`/`HEAD`/`DELETE /{db}` (plus
 * `POST /{db}`, a document write, from docs.ts), with CouchDB 3.4's answers
 * (fixtures 01-12, 79-83).
 *
 * Who may call what, as CouchDB: `_all_dbs`, creating and deleting dbs are
 * for server admins (401 "You are not a server admin.", fixtures 04, 12,
 * 80); reading a db or writing into it, for its readers (fixture 07). A
 * route's access cannot depend on the method, so `/{db}` is two route
 * tables: PUT and DELETE go to the admin one.
 */
import { isLeft } from "fp-ts/lib/Either.js";
import { compareDocIds, decodeViewQuery } from "../../core/views/index.js";
import { ADMIN_ONLY } from "../auth/access.js";
import { dbNameProblem } from "../db-name.js";
import { sendJson, sendOk } from "../respond.js";
import { routeTable, type MethodHandler, type RouteContext } from "../router.js";
import type { RouteHandler } from "../types.js";
import { dbInfoBody } from "./db-info.js";
import { dbAccess, dbNameOf, dbPath, locationHeader, withDb } from "./db-route.js";
import type { DocumentApi, DocumentDbInfo } from "./document-api.js";
import { answeringRefusals, badRequest, DB_EXISTS, DB_MISSING, notSupported, sendHttpError } from "./errors.js";
import { rangeOf, selectRange } from "./key-range.js";


export interface DbRoutesOptions {
  readonly api: DocumentApi;
  /** `POST /{db}`: a document write with a generated id (docs.ts). */
  readonly postDoc: MethodHandler;
}

const ALL_DBS_PATH = /^\/_all_dbs$/;
const DB_PATH = dbPath();

export function dbRoutes(options: DbRoutesOptions): RouteHandler[] {
  const { api } = options;
  const put: MethodHandler = (ctx) => createDb(api, ctx);
  const del: MethodHandler = (ctx) => deleteDb(api, ctx);
  const get: MethodHandler = (ctx) => withDb(api, ctx, async (db) => sendInfo(ctx, await db.info()));
  const allDbs: MethodHandler = (ctx) => listDbs(api, ctx);
  const admins = routeTable([{ path: DB_PATH, access: ADMIN_ONLY, methods: { DELETE: del, PUT: put } }]);
  const readers = routeTable([
    { path: ALL_DBS_PATH, access: ADMIN_ONLY, methods: { GET: allDbs, HEAD: allDbs } },
    // DELETE never runs from here (admins takes it); it is listed for the 405, whose list is CouchDB's (fixture 81).
    { path: DB_PATH, access: dbAccess, methods: { DELETE: del, GET: get, HEAD: get, POST: options.postDoc } },
  ]);
  return [splitByMethod(new Set(["PUT", "DELETE"]), admins, readers)];
}

/** One path, two accesses (a route's access cannot depend on the method): `adminMethods` try `admins` first. */
const splitByMethod =
  (adminMethods: ReadonlySet<string>, admins: RouteHandler, others: RouteHandler): RouteHandler =>
  async (req, res, url, scope) =>
    (adminMethods.has(req.method ?? "") && (await admins(req, res, url, scope))) || others(req, res, url, scope);

function sendInfo(ctx: RouteContext, info: DocumentDbInfo | undefined): void {
  if (info === undefined) return sendHttpError(ctx.res, DB_MISSING);
  sendJson(ctx.res, 200, dbInfoBody(info));
}

async function createDb(api: DocumentApi, ctx: RouteContext): Promise<void> {
  const name = dbNameOf(ctx);
  const problem = dbNameProblem(name);
  if (problem !== undefined) return sendHttpError(ctx.res, problem);
  if (ctx.url.searchParams.get("partitioned") === "true") return sendHttpError(ctx.res, notSupported("partitioned=true"));
  await answeringRefusals(ctx.res, async () => {
    const outcome = await api.createDb(name);
    if (outcome.ok) return sendJson(ctx.res, 201, { ok: true }, locationHeader(ctx.req, name));
    sendHttpError(ctx.res, outcome.error === "file_exists" ? DB_EXISTS : { status: 400, error: outcome.error, reason: outcome.reason });
  });
}

async function deleteDb(api: DocumentApi, ctx: RouteContext): Promise<void> {
  // CouchDB's words (fixture 79), "?=rev" included.
  if (ctx.url.searchParams.has("rev")) {
    return sendHttpError(ctx.res, badRequest("You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?"));
  }
  await answeringRefusals(ctx.res, async () => {
    if (await api.deleteDb(dbNameOf(ctx))) sendOk(ctx.res, 200);
    else sendHttpError(ctx.res, DB_MISSING);
  });
}

/** `_all_dbs` takes the view range parameters (`startkey`, `endkey`, `limit`, `skip`, `descending`, `inclusive_end`). */
async function listDbs(api: DocumentApi, ctx: RouteContext): Promise<void> {
  const decoded = decodeViewQuery(ctx.url.searchParams);
  if (isLeft(decoded)) return sendHttpError(ctx.res, decoded.left);
  await answeringRefusals(ctx.res, async () => {
    // Raw collation: db names are strings, by UTF-8 bytes.
    const names = [...(await api.listDbs())].sort(compareDocIds);
    sendJson(ctx.res, 200, selectRange(names, names, rangeOf(decoded.right)).rows);
  });
}

