/**
 * `GET|POST /{db}/_all_docs` and `/{db}/_design_docs` with CouchDB 3.4's
 * answers (fixtures 43-52): live docs by id in raw collation, rows
 * `{id,key,value:{rev}}` (plus `doc` with `include_docs`), `total_rows`,
 * `offset` (null with `keys`, as clustered CouchDB), `update_seq` on
 * request. `keys` rows keep the keys' order: a deleted doc is
 * `value:{rev,deleted:true}` (`doc: null`), a missing one `{key,error}`.
 * The parameters are the view parameters, decoded by the view core; as a
 * map "view", `_all_docs` refuses `reduce=true`, grouping, and `keys` with a
 * key range, as CouchDB's `validate_args` does. A POSTed `keys` stays a list
 * even with one key (CouchDB takes one key as `key` only for views).
 */
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { compareDocIds, decodeViewQuery } from "../../core/views/index.js";
import type { ViewQuery } from "../../ports/views.js";
import { routeTable, type MethodHandler, type RouteContext } from "../router.js";
import type { RouteHandler } from "../types.js";
import { dbAccess, dbPath, withDb } from "./db-route.js";
import type { DocRevision, DocumentApi, DocumentDb } from "./document-api.js";
import { badRequest, queryParseError, sendHttpError, type HttpError } from "./errors.js";
import { rangeOf, selectRange } from "./key-range.js";
import { MAX_JSON_DEPTH, nestedDeeperThan, readJsonObject, TOO_DEEP } from "./request-body.js";
import { sendRows } from "./rows-body.js";

const DESIGN_PREFIX = "_design/";

type Row = Readonly<Record<string, unknown>>;

export function allDocsRoutes(api: DocumentApi): RouteHandler {
  const handler =
    (designOnly: boolean): MethodHandler =>
    (ctx) =>
      allDocs(api, ctx, designOnly);
  return routeTable([
    { path: dbPath("/_all_docs"), access: dbAccess, methods: { GET: handler(false), HEAD: handler(false), POST: handler(false) } },
    { path: dbPath("/_design_docs"), access: dbAccess, methods: { GET: handler(true), HEAD: handler(true), POST: handler(true) } },
  ]);
}

async function allDocs(api: DocumentApi, ctx: RouteContext, designOnly: boolean): Promise<void> {
  await withDb(api, ctx, async (db) => {
    const read = await readQuery(ctx);
    const decoded = isLeft(read) ? read : asMapViewQuery(read.right);
    if (isLeft(decoded)) return sendHttpError(ctx.res, decoded.left);
    const query = decoded.right;
    const docs = sortedLiveDocs(await db.liveDocs(), designOnly);
    const { offset, rows } = query.keys === undefined ? rangeRows(docs, query) : await keyRows(db, query);
    const withDocs = query.includeDocs ? await includeDocs(db, rows) : rows;
    const updateSeq = query.updateSeq ? { update_seq: (await db.info())?.updateSeq } : {};
    sendRows(ctx.res, { total_rows: docs.length, offset, ...updateSeq }, withDocs);
  });
}

/** GET: the query string; POST: the body's members (`keys` must be an array, fixture 47), then the query string. */
async function readQuery(ctx: RouteContext): Promise<Either<HttpError, ViewQuery>> {
  if (ctx.req.method !== "POST") return decodeViewQuery(ctx.url.searchParams);
  const body = await readJsonObject(ctx.req);
  if (isLeft(body)) return body;
  const { keys, ...others } = body.right;
  if (keys !== undefined && !Array.isArray(keys)) return left(badRequest("`keys` body member must be an array."));
  const decoded = decodeViewQuery(ctx.url.searchParams, others);
  return isLeft(decoded) || keys === undefined ? decoded : right({ ...decoded.right, keys: keys as unknown[] });
}

/** What CouchDB's `validate_args` refuses for a map view, and keys nested too deep to echo back. */
function asMapViewQuery(query: ViewQuery): Either<HttpError, ViewQuery> {
  if (nestedDeeperThan(query, MAX_JSON_DEPTH)) return left(TOO_DEEP);
  return mapViewProblem(query) ?? right(query);
}

function mapViewProblem(query: ViewQuery): Either<HttpError, ViewQuery> | undefined {
  if (query.reduce === true) return left(queryParseError("Reduce is invalid for map-only views."));
  if (query.group === true || query.groupLevel !== undefined) return left(queryParseError("Invalid use of grouping on a map view."));
  if (query.keys !== undefined && query.keys.length > 0 && ("startkey" in query || "endkey" in query)) {
    return left(queryParseError("`keys` is incompatible with `key`, `start_key` and `end_key`"));
  }
  return undefined;
}

function sortedLiveDocs(docs: readonly DocRevision[], designOnly: boolean): DocRevision[] {
  const chosen = designOnly ? docs.filter((doc) => doc.id.startsWith(DESIGN_PREFIX)) : [...docs];
  return chosen.sort((a, b) => compareDocIds(a.id, b.id));
}

function rangeRows(docs: readonly DocRevision[], query: ViewQuery): { offset: number; rows: Row[] } {
  const window = selectRange(docs, docs.map((doc) => doc.id), rangeOf(query, true));
  return { offset: window.offset, rows: window.rows.map((doc) => ({ id: doc.id, key: doc.id, value: { rev: doc.rev } })) };
}

async function keyRows(db: DocumentDb, query: ViewQuery): Promise<{ offset: null; rows: Row[] }> {
  const keys = (query.keys ?? []).slice(query.skip, query.limit === undefined ? undefined : query.skip + query.limit);
  const rows: Row[] = [];
  for (const key of keys) rows.push(await keyRow(db, key));
  return { offset: null, rows };
}

async function keyRow(db: DocumentDb, key: unknown): Promise<Row> {
  const doc = typeof key === "string" ? await db.getDoc(key) : undefined;
  if (doc === undefined) return { key, error: "not_found" };
  return { id: doc._id, key, value: doc._deleted === true ? { rev: doc._rev, deleted: true } : { rev: doc._rev } };
}

/** `doc` after `value`: the live doc, or null for a deleted one (CouchDB leaves error rows alone). */
async function includeDocs(db: DocumentDb, rows: readonly Row[]): Promise<Row[]> {
  const out: Row[] = [];
  for (const row of rows) {
    if (typeof row["id"] !== "string") out.push(row);
    else {
      const doc = await db.getDoc(row["id"]);
      out.push({ ...row, doc: doc === undefined || doc._deleted === true ? null : doc });
    }
  }
  return out;
}
