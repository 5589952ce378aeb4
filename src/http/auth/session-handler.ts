/**
 * `/_session` on upholster's server for the local authenticator, with
 * CouchDB's shapes (fixtures 11-13): GET the session, POST name/password
 * (JSON or form) for an `AuthSession` cookie, DELETE to log out.
 */
import type { IncomingMessage } from "node:http";
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import type { RouteHandler } from "../types.js";
import type { Clock } from "../../ports/shell.js";
import { BAD_CREDENTIALS } from "./types.js";
import type { LocalAuthenticator } from "./local-authenticator.js";
import { AUTH_COOKIE } from "./session-cookie.js";
import { sendJson } from "../respond.js";

const LoginBody = t.type({ name: t.string, password: t.string });
const MAX_BODY_BYTES = 64 * 1024;
const HANDLERS = ["cookie", "default"];

export function createSessionHandler(auth: LocalAuthenticator, clock: Clock): RouteHandler {
  return async (req, res, url) => {
    if (url.pathname !== "/_session") return false;
    if (req.method === "GET" || req.method === "HEAD") {
      const who = await auth.authenticate(req);
      if (who === "bad-credentials") {
        sendJson(res, 401, BAD_CREDENTIALS);
        return true;
      }
      sendJson(res, 200, {
        ok: true,
        userCtx: { name: who?.name ?? null, roles: who?.roles ?? [] },
        info: who === null ? { authentication_handlers: HANDLERS } : { authentication_handlers: HANDLERS, authenticated: who.authenticated ?? "default" },
      });
      return true;
    }
    if (req.method === "POST") {
      const body = await readLoginBody(req);
      if (body === undefined) {
        sendJson(res, 400, { error: "bad_request", reason: "Request body must contain name and password." });
        return true;
      }
      const principal = await auth.login(body.name, body.password);
      if (principal === undefined) {
        sendJson(res, 401, BAD_CREDENTIALS);
        return true;
      }
      const maxAge = auth.cookieTimeoutSeconds;
      const expires = new Date(clock.nowMs() + maxAge * 1000).toUTCString();
      sendJson(res, 200, { ok: true, name: principal.name, roles: principal.roles }, {
        "Set-Cookie": `${AUTH_COOKIE}=${auth.issueCookie(principal.name)}; Version=1; Expires=${expires}; Max-Age=${maxAge}; Path=/; HttpOnly`,
      });
      return true;
    }
    if (req.method === "DELETE") {
      sendJson(res, 200, { ok: true }, { "Set-Cookie": `${AUTH_COOKIE}=; Version=1; Path=/; HttpOnly` });
      return true;
    }
    sendJson(res, 405, { error: "method_not_allowed", reason: "Only GET,HEAD,POST,DELETE allowed" }, { Allow: "GET,HEAD,POST,DELETE" });
    return true;
  };
}

async function readLoginBody(req: IncomingMessage): Promise<t.TypeOf<typeof LoginBody> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  const type = req.headers["content-type"] ?? "";
  let candidate: unknown;
  if (type.includes("application/x-www-form-urlencoded")) {
    const form = new URLSearchParams(text);
    candidate = { name: form.get("name") ?? undefined, password: form.get("password") ?? undefined };
  } else {
    try {
      candidate = JSON.parse(text);
    } catch {
      return undefined;
    }
  }
  const decoded = LoginBody.decode(candidate);
  return isLeft(decoded) ? undefined : decoded.right;
}
