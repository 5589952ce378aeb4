/**
 * Is a failure worth retrying soon? A timeout, a node down, maintenance
 * mode, the store switched off: yes, for ever (with back-off; CouchDB issue
 * 5392 lost dbs to exactly these). A 4xx, a broken design doc: no (retried a
 * few times, then when the db changes). An error may say so itself with a
 * boolean `transient`.
 */
import { CouchHttpError, CouchUnavailableError } from "../../adapters/couchdb-http/index.js";
import { StoreUnavailableError } from "../../adapters/memory/index.js";
import { ViewError } from "../../ports/views.js";

export const isTransient = (error: unknown): boolean => {
  if (typeof error === "object" && error !== null && typeof (error as { transient?: unknown }).transient === "boolean") {
    return (error as { transient: boolean }).transient;
  }
  if (error instanceof CouchUnavailableError || error instanceof StoreUnavailableError) return true;
  if (error instanceof CouchHttpError) return error.status >= 500 || error.status === 429 || error.status === 408;
  if (error instanceof ViewError) return error.status >= 500;
  if (error instanceof Error) return error.name === "AbortError" || error.name === "TimeoutError" || /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE/.test(error.message);
  return false;
};

/** A build that reported no progress for the build timeout. */
export class BuildTimeoutError extends Error {
  override readonly name = "BuildTimeoutError";
  readonly transient = true;
  constructor(timeoutMs: number) {
    super(`no progress for ${timeoutMs} ms`);
  }
}
