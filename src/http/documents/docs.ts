/**
 * Single documents, design docs included: `GET`/`HEAD`/`PUT`/`DELETE
 * /{db}/{docid}` and `/{db}/_design/{ddoc}` (also `_design%2F{ddoc}`, which
 * CouchDB redirects), and `POST /{db}` (an id generated when the body has
 * none), with CouchDB 3.4's answers (fixtures 13-36): `ETag` = the quoted
 * rev, `If-None-Match` (304), `Location` on writes, 404 `missing`/`deleted`,
 * 409 conflicts.
 *
 * Other ids starting with `_` are not routed here (those paths may belong to
 * other routes): `PUT /{db}/_x` is the server's 404 where CouchDB answers 400
 * `illegal_docid`; in a body (`POST /{db}`, `_bulk_docs`) it is 400 as in CouchDB.
 */
import { isLeft } from "fp-ts/lib/Either.js";
import { sendJson } from "../respond.js";
import { routeTable, type MethodHandler, type RouteContext } from "../router.js";
import type { RouteHandler } from "../types.js";
import { designDocProblem } from "./design-doc.js";
import { decodeDocument, docIdProblem, toDocWrite, type DocumentInput } from "./doc-body.js";
import { decodeReadParams, decodeWriteParams, type WriteParams } from "./doc-params.js";
import { dbAccess, dbPath, locationHeader, withDb } from "./db-route.js";
import type { DocumentApi, DocumentDb, StoredDoc } from "./document-api.js";
import { DOC_DELETED, DOC_MISSING, sendHttpError, type HttpError } from "./errors.js";
import { matchesEtag, sendNotModified } from "./etag.js";
import { readJson } from "./request-body.js";
import { writeFailure } from "./write-results.js";

export interface DocRoutesOptions {
  readonly api: DocumentApi;
  /** Ids for `POST /{db}` bodies without `_id` (CouchDB: a sequential uuid). */
  readonly newDocId: () => string;
}

type IdOf = (params: readonly string[]) => string;

export function docRoutes(options: DocRoutesOptions): RouteHandler {
  const methods = (idOf: IdOf): Partial<Record<"DELETE" | "GET" | "HEAD" | "PUT", MethodHandler>> => {
    const get: MethodHandler = (ctx) => readDoc(options.api, ctx, idOf(ctx.params));
    return {
      DELETE: (ctx) => deleteDoc(options.api, ctx, idOf(ctx.params)),
      GET: get,
      HEAD: get,
      PUT: (ctx) => putDoc(options.api, ctx, idOf(ctx.params)),
    };
  };
  return routeTable([
    { path: dbPath("/_design/([^/]+)"), access: dbAccess, methods: methods((p) => `_design/${p[1] ?? ""}`) },
    { path: dbPath("/_local/([^/]+)"), access: dbAccess, methods: methods((p) => `_local/${p[1] ?? ""}`) },
    // One segment: a plain id (`a%2Fb` is "a/b"), or `_design%2Fd` / `_local%2Fx` in one piece.
    { path: dbPath("/((?!_)[^/]+|_design%2[Ff][^/]+|_local%2[Ff][^/]+)"), access: dbAccess, methods: methods((p) => p[1] ?? "") },
  ]);
}

/** `POST /{db}`: mounted on the db's own route (dbs.ts). */
export function postDocHandler(options: DocRoutesOptions): MethodHandler {
  return (ctx) =>
    withDb(options.api, ctx, async (db, name) => {
      const input = await readDocument(ctx);
      if (input === undefined) return;
      const params = decodeWriteParams(ctx.req, ctx.url.searchParams, input.rev);
      if (isLeft(params)) return sendHttpError(ctx.res, params.left);
      const id = input.id ?? options.newDocId();
      await writeAndAnswer(ctx, { db, dbName: name, id, params: params.right, input, withEtag: false });
    });
}

async function readDoc(api: DocumentApi, ctx: RouteContext, id: string): Promise<void> {
  const params = decodeReadParams(ctx.url.searchParams);
  if (isLeft(params)) return sendHttpError(ctx.res, params.left);
  await withDb(api, ctx, async (db) => {
    const doc = await db.getDoc(id);
    const problem = readProblem(doc, params.right.rev);
    if (problem !== undefined || doc === undefined) return sendHttpError(ctx.res, problem ?? DOC_MISSING);
    const etag = `"${doc._rev}"`;
    if (matchesEtag(ctx.req, etag)) return sendNotModified(ctx.res, etag);
    sendJson(ctx.res, 200, doc, { ETag: etag });
  });
}

/** Without `rev`, a deleted doc is 404 `deleted`; with one, that revision or 404 `missing` (only the latest is kept). */
function readProblem(doc: StoredDoc | undefined, rev: string | undefined): HttpError | undefined {
  if (doc === undefined) return DOC_MISSING;
  if (rev !== undefined) return doc._rev === rev ? undefined : DOC_MISSING;
  return doc._deleted === true ? DOC_DELETED : undefined;
}

async function putDoc(api: DocumentApi, ctx: RouteContext, id: string): Promise<void> {
  await withDb(api, ctx, async (db, name) => {
    const input = await readDocument(ctx);
    if (input === undefined) return;
    const params = decodeWriteParams(ctx.req, ctx.url.searchParams, input.rev);
    if (isLeft(params)) return sendHttpError(ctx.res, params.left);
    await writeAndAnswer(ctx, { db, dbName: name, id, params: params.right, input, withEtag: true });
  });
}

async function deleteDoc(api: DocumentApi, ctx: RouteContext, id: string): Promise<void> {
  const params = decodeWriteParams(ctx.req, ctx.url.searchParams);
  if (isLeft(params)) return sendHttpError(ctx.res, params.left);
  await withDb(api, ctx, async (db) => {
    // CouchDB: deleting what is not there is 404 `missing` or `deleted`, whatever the rev.
    const current = await db.getDoc(id);
    const problem = readProblem(current, undefined);
    if (problem !== undefined) return sendHttpError(ctx.res, problem);
    const [result] = await db.writeDocs([{ _id: id, _rev: params.right.rev, _deleted: true }]);
    if (result === undefined || !result.ok) return sendHttpError(ctx.res, result === undefined ? DOC_MISSING : writeFailure(result));
    sendJson(ctx.res, 200, { ok: true, id: result.id, rev: result.rev }, { ETag: `"${result.rev}"` });
  });
}

/** The body as a document, or `undefined` once the error was answered. */
async function readDocument(ctx: RouteContext): Promise<DocumentInput | undefined> {
  const body = await readJson(ctx.req);
  const input = isLeft(body) ? body : decodeDocument(body.right);
  if (!isLeft(input)) return input.right;
  sendHttpError(ctx.res, input.left);
  return undefined;
}

interface SingleWrite {
  readonly db: DocumentDb;
  readonly dbName: string;
  readonly id: string;
  readonly params: WriteParams;
  readonly input: DocumentInput;
  /** PUT answers with an ETag, POST does not (fixtures 13, 26). */
  readonly withEtag: boolean;
}

async function writeAndAnswer(ctx: RouteContext, write: SingleWrite): Promise<void> {
  const { db, dbName, id, params, input } = write;
  const problem = docIdProblem(id) ?? (id.startsWith("_design/") ? designDocProblem(input.body) : undefined);
  if (problem !== undefined) return sendHttpError(ctx.res, problem);
  const [result] = await db.writeDocs([toDocWrite(id, params.rev, input)]);
  if (result === undefined || !result.ok) return sendHttpError(ctx.res, result === undefined ? DOC_MISSING : writeFailure(result));
  // batch=ok: CouchDB answers 202 before writing; the write is done here already, so a failure is still reported.
  if (params.batch) return sendJson(ctx.res, 202, { ok: true, id: result.id });
  const etag: Record<string, string> = write.withEtag ? { ETag: `"${result.rev}"` } : {};
  sendJson(ctx.res, 201, { ok: true, id: result.id, rev: result.rev }, { ...etag, ...locationHeader(ctx.req, dbName, result.id) });
}
