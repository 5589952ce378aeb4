/**
 * A tiny route table: paths (regexes) with one handler per method, each
 * route declaring who may call it (`access`). A known path asked with another
 * method gets CouchDB's 405; an unknown path falls through (the server tries
 * the next RouteHandler, then answers 404). Access is checked by the server's
 * guard as soon as the path matches, before the method and the handler.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Access } from "./auth/access.js";
import { CLOSED_GUARD, type Admission, type Guard } from "./auth/guard.js";
import { sendMethodNotAllowed } from "./respond.js";
import type { RouteHandler } from "./types.js";

export interface RouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  /** Regex capture groups of the path, URL-decoded. */
  readonly params: readonly string[];
  /** Who the guard let in. */
  readonly admission: Admission;
}

export type MethodHandler = (ctx: RouteContext) => Promise<void> | void;

export type Method = "GET" | "POST" | "PUT" | "DELETE" | "HEAD";

export interface Route {
  /** Anchored regex over the URL's pathname. */
  readonly path: RegExp;
  /** Who may call it; a function of the path's parameters for per-db rules (`dbReader(params[0])`). */
  readonly access: Access | ((params: readonly string[]) => Access);
  readonly methods: Readonly<Partial<Record<Method, MethodHandler>>>;
}

/** `fallbackGuard`: used when no server scope is given (see RouteHandler); by default only public routes answer. */
export function routeTable(routes: readonly Route[], fallbackGuard: Guard = CLOSED_GUARD): RouteHandler {
  return async (req, res, url, scope) => {
    for (const route of routes) {
      const match = route.path.exec(url.pathname);
      if (match === null) continue;
      const params = match.slice(1).map((p) => safeDecode(p ?? ""));
      // Who may call it first, then the method: CouchDB authorizes a path before it routes it.
      const access = typeof route.access === "function" ? route.access(params) : route.access;
      const admission = await (scope?.guard ?? fallbackGuard).admit(req, res, access);
      if (admission === undefined) return true;
      const handler = route.methods[(req.method ?? "GET") as Method];
      if (handler === undefined) sendMethodNotAllowed(res, Object.keys(route.methods));
      else await handler({ req, res, url, params, admission });
      return true;
    }
    return false;
  };
}

const safeDecode = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};
