/** JSON responses with CouchDB's headers (`Cache-Control: must-revalidate`, no `WWW-Authenticate` on 401). */
import type { ServerResponse } from "node:http";

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Cache-Control": "must-revalidate",
    "Content-Length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}
