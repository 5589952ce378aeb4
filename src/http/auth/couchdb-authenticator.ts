/**
 * Authentication by CouchDB itself: the client's `Authorization` and
 * `Cookie` headers are forwarded to `GET {couchdb}/_session`, so CouchDB's
 * admins (and its users db, proxies, JWT...) are upholster's. Answers are
 * cached briefly per credential (bounded) so a feed does not cost CouchDB a
 * session lookup per request.
 */
import type { IncomingMessage } from "node:http";
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import { request } from "undici";
import type { Clock } from "../../ports/shell.js";
import type { Authenticator, AuthResult } from "./types.js";

const SessionResponse = t.type({
  userCtx: t.type({ name: t.union([t.string, t.null]), roles: t.array(t.string) }),
  info: t.union([t.undefined, t.partial({ authenticated: t.string })]),
});

export interface CouchDbAuthenticatorOptions {
  /** e.g. `http://127.0.0.1:5984` (no credentials needed: the client's are used). */
  readonly couchdbUrl: string;
  readonly clock: Clock;
  /** How long an answer is reused. Default 5 s. */
  readonly cacheMs?: number;
  readonly maxCacheEntries?: number;
  readonly requestTimeoutMs?: number;
}

export function createCouchDbAuthenticator(options: CouchDbAuthenticatorOptions): Authenticator {
  // Relative to the base path, so a CouchDB behind a prefix (`https://host/couch/`) keeps it.
  const base = options.couchdbUrl.endsWith("/") ? options.couchdbUrl : `${options.couchdbUrl}/`;
  const sessionUrl = new URL("_session", base).toString();
  const cacheMs = options.cacheMs ?? 5_000;
  const maxEntries = options.maxCacheEntries ?? 1_000;
  const cache = new Map<string, { readonly result: AuthResult; readonly expiresAtMs: number }>();

  async function ask(authorization: string | undefined, cookie: string | undefined): Promise<AuthResult> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (authorization !== undefined) headers["authorization"] = authorization;
    if (cookie !== undefined) headers["cookie"] = cookie;
    const timeoutMs = options.requestTimeoutMs ?? 10_000;
    const res = await request(sessionUrl, { method: "GET", headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const text = await res.body.text();
    // CouchDB answers 400 to credentials it cannot read (a Basic value that is not base64, an AuthSession
    // cookie that is not `name:time:hash`): it was asked and refused them, so 401, not a 503 (found by fuzz.test.ts).
    if (res.statusCode === 401 || res.statusCode === 400) return "bad-credentials";
    if (res.statusCode !== 200) throw new Error(`CouchDB GET /_session answered ${res.statusCode}`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error("CouchDB GET /_session answered invalid JSON");
    }
    const decoded = SessionResponse.decode(json);
    if (isLeft(decoded)) throw new Error(`CouchDB GET /_session answered an unexpected body: ${text.slice(0, 200)}`);
    const { name, roles } = decoded.right.userCtx;
    if (name === null) return null;
    return { name, roles, authenticated: decoded.right.info?.authenticated };
  }

  return {
    // CouchDB 3 does not start without an admin.
    hasAdmins: () => true,
    async authenticate(req: IncomingMessage): Promise<AuthResult> {
      const authorization = req.headers.authorization;
      const cookie = req.headers.cookie;
      if (authorization === undefined && cookie === undefined) return null;
      const key = `${authorization ?? ""}\n${cookie ?? ""}`;
      const nowMs = options.clock.nowMs();
      const hit = cache.get(key);
      if (hit !== undefined && hit.expiresAtMs > nowMs) return hit.result;
      const result = await ask(authorization, cookie);
      cache.delete(key);
      cache.set(key, { result, expiresAtMs: nowMs + cacheMs });
      while (cache.size > maxEntries) cache.delete(cache.keys().next().value as string);
      return result;
    },
  };
}
