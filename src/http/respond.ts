/**
 * JSON responses the way CouchDB sends them: `application/json`,
 * `Cache-Control: must-revalidate`, errors as `{"error","reason"}`.
 */
import type { ServerResponse } from "node:http";
import { UPHOLSTER_VERSION } from "../version.js";

export const SERVER_HEADER = `upholster/${UPHOLSTER_VERSION}`;

/**
 * Priorities can be infinite (a restored running job is queued at infinity).
 * JSON has no Infinity; CouchDB writes Erlang's `infinity` atom as the string
 * "infinity", so we do too rather than let JSON.stringify turn it into null.
 */
const couchReplacer = (_key: string, value: unknown): unknown =>
  value === Number.POSITIVE_INFINITY ? "infinity" : value === Number.NEGATIVE_INFINITY ? "-infinity" : value;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  sendJsonText(res, status, `${JSON.stringify(body, couchReplacer)}\n`, headers);
}

/**
 * A body already serialized (rows one per line, or a body known to hold no
 * infinite number, serialized without the replacer: JSON.stringify then
 * stays on its fast path), with CouchDB's JSON headers.
 */
export function sendJsonText(res: ServerResponse, status: number, text: string, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Cache-Control": "must-revalidate",
    "Content-Length": String(Buffer.byteLength(text)),
    Server: SERVER_HEADER,
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, error: string, reason: string, headers: Readonly<Record<string, string>> = {}): void {
  sendJson(res, status, { error, reason }, headers);
}

/** CouchDB: `405 {"error":"method_not_allowed","reason":"Only GET allowed"}`, plus the `Allow` header HTTP asks for. */
export function sendMethodNotAllowed(res: ServerResponse, allowed: readonly string[]): void {
  sendError(res, 405, "method_not_allowed", `Only ${allowed.join(",")} allowed`, { Allow: allowed.join(", ") });
}

export function sendNotFound(res: ServerResponse): void {
  sendError(res, 404, "not_found", "missing");
}

export const sendOk = (res: ServerResponse, status = 200): void => sendJson(res, status, { ok: true });
