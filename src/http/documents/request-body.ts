/**
 * JSON request bodies of the document routes: read with the document limit
 * (body.ts, 64 MiB), parsed, and refused when nested deeper than `MAX_JSON_DEPTH`
 * (JSON.parse reads 20,000 `[` happily; echoing such a value back, or
 * storing it, would overflow the stack when it is written out again). Keys
 * in query strings (`keys=[[[...`) are held to the same depth.
 */
import type { IncomingMessage } from "node:http";
import * as t from "io-ts";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { MAX_DOCUMENT_REQUEST_BYTES, readJsonBody } from "../body.js";
import { badRequest, type HttpError } from "./errors.js";

/** Far deeper than documents go, far shallower than the stack. */
export const MAX_JSON_DEPTH = 512;

/** Iterative, so that checking a deep value cannot overflow either. */
export function nestedDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.value === null || typeof next.value !== "object") continue;
    if (next.depth >= maxDepth) return true;
    for (const child of Object.values(next.value)) pending.push({ value: child, depth: next.depth + 1 });
  }
  return false;
}

export const TOO_DEEP: HttpError = badRequest(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);

/** Any JSON; `emptyAs` for an empty body (where CouchDB takes none as `{}`). */
export async function readJson(req: IncomingMessage, options: { readonly emptyAs?: unknown } = {}): Promise<Either<HttpError, unknown>> {
  const body = await readJsonBody(req, t.unknown, { ...options, limitBytes: MAX_DOCUMENT_REQUEST_BYTES });
  if (isLeft(body)) return body;
  if (nestedDeeperThan(body.right, MAX_JSON_DEPTH)) return left(TOO_DEEP);
  return right(body.right);
}

/** A JSON object (CouchDB: "Request body must be a JSON object"); an empty body is `{}`. */
export async function readJsonObject(req: IncomingMessage): Promise<Either<HttpError, Readonly<Record<string, unknown>>>> {
  const body = await readJson(req, { emptyAs: {} });
  if (isLeft(body)) return body;
  return t.UnknownRecord.is(body.right) ? right(body.right) : left(badRequest("Request body must be a JSON object"));
}
