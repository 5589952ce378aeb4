/** Reading credentials from a request: HTTP Basic and the `AuthSession` cookie. */
import type { IncomingMessage } from "node:http";

export interface BasicCredentials {
  readonly name: string;
  readonly password: string;
}

/** `undefined` when there is no Basic header; `invalid` when it is there but unreadable. */
export function basicCredentials(req: IncomingMessage): BasicCredentials | "invalid" | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (match === null) return "invalid";
  const decoded = Buffer.from(match[1] ?? "", "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return "invalid";
  return { name: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export function cookieValue(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
