/**
 * A store's write results as CouchDB answers them: `_bulk_docs` rows
 * (`{ok,id,rev}` or `{id,error,reason}`, fixture 37) and, for a single
 * write, the HTTP status of its error (409 conflict, 400 for what the doc
 * got wrong, 404 when the db went away meanwhile).
 */
import type { DocWriteResult } from "./document-api.js";
import type { HttpError } from "./errors.js";

const ERROR_STATUS: Readonly<Record<string, number>> = {
  conflict: 409,
  not_found: 404,
  forbidden: 403,
  unauthorized: 401,
  bad_request: 400,
  illegal_docid: 400,
  doc_validation: 400,
  invalid_design_doc: 400,
};

/** A failed write as an HTTP error; an error the store made up is its failure (500), not the client's. */
export function writeFailure(result: Extract<DocWriteResult, { ok: false }>): HttpError {
  const status = ERROR_STATUS[result.error] ?? 500;
  const reason = result.error === "not_found" ? "Database does not exist." : (result.reason ?? result.error);
  return { status, error: result.error, reason };
}

/** One row of a `_bulk_docs` answer, in CouchDB's member order. */
export function bulkRow(result: DocWriteResult): object {
  if (result.ok) return { ok: true, id: result.id, rev: result.rev };
  return { id: result.id, error: result.error, reason: writeFailure(result).reason };
}
