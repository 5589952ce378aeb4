/** `If-None-Match` against an ETag, and CouchDB's 304 (no body, the ETag repeated). */
import type { IncomingMessage, ServerResponse } from "node:http";
import { SERVER_HEADER } from "../respond.js";

export const matchesEtag = (req: IncomingMessage, etag: string): boolean => {
  const header = req.headers["if-none-match"];
  return header !== undefined && header.split(",").some((candidate) => candidate.trim() === etag);
};

export function sendNotModified(res: ServerResponse, etag: string): void {
  res.writeHead(304, { ETag: etag, "Cache-Control": "must-revalidate", Server: SERVER_HEADER });
  res.end();
}
