/**
 * `POST /{db}/_bulk_docs` with CouchDB 3.4's answers (fixtures 37-42): 201
 * with one result per doc in order (conflicts and invalid design docs are
 * that doc's result); a body, a `docs` member or any doc CouchDB cannot take
 * fails the whole request with 400. Docs without `_id` get a generated one.
 * `new_edits: false` (replication) and `all_or_nothing` are refused.
 */
import * as t from "io-ts";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { sendJson } from "../respond.js";
import { routeTable, type RouteContext } from "../router.js";
import type { RouteHandler } from "../types.js";
import { dbAccess, dbPath, withDb } from "./db-route.js";
import { designDocProblem } from "./design-doc.js";
import { decodeDocument, toDocWrite } from "./doc-body.js";
import type { DocumentApi, DocumentDb, DocWrite, DocWriteResult } from "./document-api.js";
import { badRequest, notSupported, sendHttpError, type HttpError } from "./errors.js";
import { readJson } from "./request-body.js";
import { bulkRow } from "./write-results.js";

export interface BulkRoutesOptions {
  readonly api: DocumentApi;
  readonly newDocId: () => string;
}

/** A doc the store will be asked to write, or the result it already has (an invalid design doc). */
type Planned = { readonly write: DocWrite } | { readonly result: DocWriteResult };

export function bulkRoutes(options: BulkRoutesOptions): RouteHandler {
  return routeTable([{ path: dbPath("/_bulk_docs"), access: dbAccess, methods: { POST: (ctx) => bulkDocs(options, ctx) } }]);
}

async function bulkDocs(options: BulkRoutesOptions, ctx: RouteContext): Promise<void> {
  await withDb(options.api, ctx, async (db) => {
    const body = await readJson(ctx.req);
    const docs = isLeft(body) ? body : decodeBulkBody(body.right);
    const planned = isLeft(docs) ? docs : planWrites(docs.right, options.newDocId);
    if (isLeft(planned)) return sendHttpError(ctx.res, planned.left);
    sendJson(ctx.res, 201, (await carryOut(db, planned.right)).map(bulkRow));
  });
}

/** CouchDB's checks and words, in its order. */
function decodeBulkBody(body: unknown): Either<HttpError, readonly unknown[]> {
  if (!t.UnknownRecord.is(body)) return left(badRequest("Request body must be a JSON object"));
  const docs = body["docs"];
  if (docs === undefined) return left(badRequest("POST body must include `docs` parameter."));
  if (!t.UnknownArray.is(docs)) return left(badRequest("`docs` parameter must be an array."));
  const newEdits = body["new_edits"] ?? true;
  if (!t.boolean.is(newEdits)) return left(badRequest("`new_edits` parameter must be a boolean."));
  if (!newEdits) return left(notSupported("new_edits=false"));
  if (body["all_or_nothing"] === true) return left(notSupported("all_or_nothing"));
  return right(docs);
}

function planWrites(docs: readonly unknown[], newDocId: () => string): Either<HttpError, Planned[]> {
  const planned: Planned[] = [];
  for (const doc of docs) {
    const input = decodeDocument(doc);
    if (isLeft(input)) return input;
    const id = input.right.id ?? newDocId();
    const problem = id.startsWith("_design/") ? designDocProblem(input.right.body) : undefined;
    planned.push(
      problem === undefined
        ? { write: toDocWrite(id, input.right.rev, input.right) }
        : { result: { id, ok: false, error: problem.error, reason: problem.reason } },
    );
  }
  return right(planned);
}

/** One store call for the writable docs; results back in the request's order. */
async function carryOut(db: DocumentDb, planned: readonly Planned[]): Promise<DocWriteResult[]> {
  const writes = planned.flatMap((p) => ("write" in p ? [p.write] : []));
  const written = writes.length === 0 ? [] : await db.writeDocs(writes);
  let next = 0;
  return planned.map((p) => ("result" in p ? p.result : (written[next++] ?? { id: p.write._id, ok: false, error: "not_found", reason: "no result" })));
}
