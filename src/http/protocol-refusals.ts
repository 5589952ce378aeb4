/**
 * Requests node's HTTP server refuses on its own, after parsing them, with
 * an empty body: an HTTP/1.1 request without `Host` (node's
 * `requireHostHeader`: a bare 400) and an `Expect` other than `100-continue`
 * (a bare 417). upholster takes both over so the answer carries CouchDB's
 * `{"error","reason"}` like every other one (found by test/http/fuzz.test.ts).
 * Both close the connection: the request's body, if any, is not read.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendError } from "./respond.js";

const CLOSE = { Connection: "close" };

/** RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without Host. True when it answered. */
export function refuseMissingHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.httpVersion !== "1.1" || req.headers.host !== undefined) return false;
  sendError(res, 400, "bad_request", "HTTP/1.1 requests need a Host header.", CLOSE);
  return true;
}

/** For node's `checkExpectation` event: only `Expect: 100-continue` is understood (RFC 9110 §10.1.1). */
export function refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
  sendError(res, 417, "expectation_failed", `Expect: ${JSON.stringify(req.headers.expect ?? "")} is not supported (only 100-continue is).`, CLOSE);
}
