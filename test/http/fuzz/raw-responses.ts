/**
 * Reads HTTP/1.1 responses out of the bytes a raw socket received, in order:
 * status, headers, and the body framed by Content-Length, chunked encoding or
 * the end of the connection. What is cut short is returned with
 * `complete: false` (its status still counts; its body is not judged).
 */
export interface RawResponse {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
  readonly complete: boolean;
  /** An answer to HEAD, a 204 or a 304: it has no body to judge. */
  readonly bodyless: boolean;
}

const HEAD_END = "\r\n\r\n";

/** `methods`: of the requests sent, in order (a response to HEAD has no body). */
export function parseResponses(bytes: string, methods: readonly string[]): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = bytes;
  let answered = 0;
  while (rest.length > 0) {
    const headEnd = rest.indexOf(HEAD_END);
    const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(rest);
    if (statusLine === null) break;
    const status = Number(statusLine[1]);
    if (headEnd < 0) {
      responses.push({ status, headers: new Map(), body: "", complete: false, bodyless: false });
      break;
    }
    const headers = parseHeaders(rest.slice(0, headEnd));
    rest = rest.slice(headEnd + HEAD_END.length);
    if (status >= 100 && status < 200) continue; // 100 Continue: the real answer follows
    const noBody = methods[answered] === "HEAD" || status === 204 || status === 304;
    answered += 1;
    const framed = noBody ? { body: "", used: 0, complete: true } : frameBody(rest, headers);
    responses.push({ status, headers, body: framed.body, complete: framed.complete, bodyless: noBody });
    rest = rest.slice(framed.used);
  }
  return responses;
}

function parseHeaders(head: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of head.split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function frameBody(rest: string, headers: ReadonlyMap<string, string>): { body: string; used: number; complete: boolean } {
  const length = headers.get("content-length");
  if (length !== undefined) {
    const n = Number(length);
    return { body: rest.slice(0, n), used: Math.min(n, rest.length), complete: rest.length >= n };
  }
  if (/chunked/i.test(headers.get("transfer-encoding") ?? "")) return unchunk(rest);
  return { body: rest, used: rest.length, complete: true };
}

function unchunk(rest: string): { body: string; used: number; complete: boolean } {
  let body = "";
  let at = 0;
  for (;;) {
    const lineEnd = rest.indexOf("\r\n", at);
    if (lineEnd < 0) return { body, used: rest.length, complete: false };
    const size = parseInt(rest.slice(at, lineEnd), 16);
    if (!Number.isFinite(size)) return { body, used: rest.length, complete: false };
    if (size === 0) {
      const trailerEnd = rest.indexOf("\r\n", lineEnd + 2);
      return { body, used: trailerEnd < 0 ? rest.length : trailerEnd + 2, complete: trailerEnd >= 0 };
    }
    const start = lineEnd + 2;
    if (rest.length < start + size + 2) return { body: body + rest.slice(start), used: rest.length, complete: false };
    body += rest.slice(start, start + size);
    at = start + size + 2;
  }
}
