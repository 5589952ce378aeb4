/**
 * CouchDB 3.4's error answers for the document API, recorded in
 * test/fixtures/couchdb-3.4.3-docs (numbers in comments), and the one place
 * that sends them.
 */
import type { ServerResponse } from "node:http";
import type { HttpError } from "../body.js";
import { sendError } from "../respond.js";
import { isRefusal } from "./document-api.js";

export type { HttpError };

const error = (status: number, name: string, reason: string): HttpError => ({ status, error: name, reason });

/** 09, 25, 51, 83. */
export const DB_MISSING = error(404, "not_found", "Database does not exist.");
/** 32. */
export const DOC_MISSING = error(404, "not_found", "missing");
/** 30. */
export const DOC_DELETED = error(404, "not_found", "deleted");
/** 17, 19, 33. */
export const CONFLICT = error(409, "conflict", "Document update conflict.");
/** 02. */
export const DB_EXISTS = error(412, "file_exists", "The database could not be created, the file already exists.");
/** 20. */
export const INVALID_REV = error(400, "bad_request", "Invalid rev format");
/** 21, 40. */
export const NOT_AN_OBJECT = error(400, "bad_request", "Document must be a JSON object");

export const badRequest = (reason: string): HttpError => error(400, "bad_request", reason);
/** CouchDB's view and `_all_docs` parameter errors (48, 49, 71, 73). */
export const queryParseError = (reason: string): HttpError => error(400, "query_parse_error", reason);
/** What CouchDB has and the embedded store does not do; said plainly rather than ignored. */
export const notSupported = (what: string): HttpError => badRequest(`${what} is not supported by upholster's embedded store`);

export function sendHttpError(res: ServerResponse, problem: HttpError, headers: Readonly<Record<string, string>> = {}): void {
  sendError(res, problem.status, problem.error, problem.reason, headers);
}

/** Runs a store call; a store's refusal (503 while it is switched off) is answered, anything else rethrown (500). */
export async function answeringRefusals(res: ServerResponse, handle: () => Promise<void>): Promise<void> {
  try {
    await handle();
  } catch (failure) {
    if (!isRefusal(failure) || res.headersSent) throw failure;
    sendHttpError(res, failure);
  }
}
