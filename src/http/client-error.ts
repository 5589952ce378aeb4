/**
 * Requests node's HTTP parser refuses before any handler sees them. Without
 * a `clientError` listener node answers a bare `431` or `400` with an empty
 * body; upholster answers with a CouchDB-style JSON body, then closes (the
 * rest of such a request cannot be read).
 *
 * CouchDB (mochiweb) answers an empty 400 to an oversized request line or
 * header; upholster says 431, what HTTP has for it (RFC 6585).
 */
import { maxHeaderSize } from "node:http";
import type { Duplex } from "node:stream";
import { SERVER_HEADER } from "./respond.js";

/** The request line and every header together: node's `maxHeaderSize` (16 KiB unless `--max-http-header-size` says otherwise). */
export const DEFAULT_MAX_HEADER_BYTES = maxHeaderSize;

interface Answer {
  readonly status: number;
  readonly statusText: string;
  readonly error: string;
  readonly reason: string;
}

export function clientErrorAnswer(code: string | undefined, maxHeaderBytes: number): Answer {
  if (code === "HPE_HEADER_OVERFLOW") {
    return {
      status: 431,
      statusText: "Request Header Fields Too Large",
      error: "header_too_large",
      reason: `The request line and headers are larger than ${maxHeaderBytes} bytes.`,
    };
  }
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return { status: 408, statusText: "Request Timeout", error: "request_timeout", reason: "The request was not received in time." };
  }
  return { status: 400, statusText: "Bad Request", error: "bad_request", reason: `Malformed HTTP request (${code ?? "unreadable"}).` };
}

/** Writes the raw response on the socket and closes it; a socket already gone is left alone. */
export function answerClientError(error: Error & { code?: string }, socket: Duplex, maxHeaderBytes: number): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const answer = clientErrorAnswer(error.code, maxHeaderBytes);
  const body = `${JSON.stringify({ error: answer.error, reason: answer.reason })}\n`;
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.statusText}\r\n` +
      "Content-Type: application/json\r\n" +
      "Cache-Control: must-revalidate\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `Server: ${SERVER_HEADER}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
  );
}
