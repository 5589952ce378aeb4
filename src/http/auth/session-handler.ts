/**
 * `/_session` on upholster's server for the local authenticator, with
 * CouchDB's shapes (fixtures 11-13): GET the session, POST name/password
 * (JSON or form) for an `AuthSession` cookie, DELETE to log out.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import * as t from "io-ts";
import { isLeft, right, type Either } from "fp-ts/lib/Either.js";
import type { RouteHandler } from "../types.js";
import type { Clock } from "../../ports/shell.js";
import { BAD_CREDENTIALS } from "./types.js";
import type { LocalAuthenticator } from "./local-authenticator.js";
import { AUTH_COOKIE } from "./session-cookie.js";
import { sendJson } from "../respond.js";
import { readBody, type HttpError } from "../body.js";

const LoginBody = t.type({ name: t.string, password: t.string });
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
      await login(req, res, auth, clock);
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

/** `POST /_session`: name and password for an `AuthSession` cookie, CouchDB's answers. */
async function login(req: IncomingMessage, res: ServerResponse, auth: LocalAuthenticator, clock: Clock): Promise<void> {
  const body = await readLoginBody(req);
  if (isLeft(body)) return sendJson(res, body.left.status, { error: body.left.error, reason: body.left.reason });
  if (body.right === undefined) return sendJson(res, 400, { error: "bad_request", reason: "Request body must contain name and password." });
  const principal = await auth.login(body.right.name, body.right.password);
  if (principal === undefined) return sendJson(res, 401, BAD_CREDENTIALS);
  const maxAge = auth.cookieTimeoutSeconds;
  const expires = new Date(clock.nowMs() + maxAge * 1000).toUTCString();
  sendJson(res, 200, { ok: true, name: principal.name, roles: principal.roles }, {
    "Set-Cookie": `${AUTH_COOKIE}=${auth.issueCookie(principal.name)}; Version=1; Expires=${expires}; Max-Age=${maxAge}; Path=/; HttpOnly`,
  });
}

/**
 * The body as JSON or a form; `right(undefined)` when it has no name and
 * password. Read with the server's bounded reader (`left`: 413, or 400 when
 * the client went away mid-body), which never throws into the handler.
 */
async function readLoginBody(req: IncomingMessage): Promise<Either<HttpError, t.TypeOf<typeof LoginBody> | undefined>> {
  const raw = await readBody(req);
  if (isLeft(raw)) return raw;
  const text = raw.right.toString("utf8");
  const type = req.headers["content-type"] ?? "";
  let candidate: unknown;
  if (type.includes("application/x-www-form-urlencoded")) {
    const form = new URLSearchParams(text);
    candidate = { name: form.get("name") ?? undefined, password: form.get("password") ?? undefined };
  } else {
    try {
      candidate = JSON.parse(text);
    } catch {
      return right(undefined);
    }
  }
  const decoded = LoginBody.decode(candidate);
  return right(isLeft(decoded) ? undefined : decoded.right);
}
