/**
 * The revision a single-document request names, and its other parameters,
 * decoded as CouchDB 3.4 reads them: `?rev=`, the `If-Match` header and the
 * body's `_rev` must agree (fixture 18, and CouchDB's "Document rev and etag
 * have different values"); `batch=ok` answers 202 (fixture 27);
 * `new_edits=false` and `open_revs` are refused (the embedded store only
 * makes new edits and keeps no revision tree).
 */
import type { IncomingMessage } from "node:http";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { RevText } from "./doc-body.js";
import { badRequest, INVALID_REV, notSupported, type HttpError } from "./errors.js";

export interface WriteParams {
  readonly rev?: string | undefined;
  readonly batch: boolean;
}

/** `?rev=` when given and well formed. */
function queryRev(query: URLSearchParams): Either<HttpError, string | undefined> {
  const raw = query.get("rev");
  if (raw === null) return right(undefined);
  const decoded = RevText.decode(raw);
  return isLeft(decoded) ? left(INVALID_REV) : right(decoded.right);
}

/** `If-Match: "1-abc"` (the quotes are optional, as in CouchDB). */
function ifMatchRev(req: IncomingMessage): Either<HttpError, string | undefined> {
  const header = req.headers["if-match"];
  if (header === undefined) return right(undefined);
  const decoded = RevText.decode(header.trim().replace(/^"(.*)"$/, "$1"));
  return isLeft(decoded) ? left(INVALID_REV) : right(decoded.right);
}

export function decodeReadParams(query: URLSearchParams): Either<HttpError, { readonly rev?: string | undefined }> {
  if (query.has("open_revs")) return left(notSupported("open_revs"));
  const rev = queryRev(query);
  return isLeft(rev) ? rev : right({ rev: rev.right });
}

/** `bodyRev`: the body's `_rev` (PUT), or nothing (DELETE). */
export function decodeWriteParams(req: IncomingMessage, query: URLSearchParams, bodyRev?: string): Either<HttpError, WriteParams> {
  if (query.get("new_edits") === "false") return left(notSupported("new_edits=false"));
  const fromQuery = queryRev(query);
  if (isLeft(fromQuery)) return fromQuery;
  const fromHeader = ifMatchRev(req);
  if (isLeft(fromHeader)) return fromHeader;
  if (fromQuery.right !== undefined && bodyRev !== undefined && fromQuery.right !== bodyRev) {
    return left(badRequest("Document rev from request body and query string have different values"));
  }
  const explicit = fromQuery.right ?? bodyRev;
  if (fromHeader.right !== undefined && explicit !== undefined && fromHeader.right !== explicit) {
    return left(badRequest("Document rev and etag have different values"));
  }
  return right({ rev: explicit ?? fromHeader.right, batch: query.get("batch") === "ok" });
}
