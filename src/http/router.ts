/**
 * A tiny route table: paths (regexes) with one handler per method. A known
 * path asked with another method gets CouchDB's 405; an unknown path falls
 * through (the server tries the next RouteHandler, then answers 404).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendMethodNotAllowed } from "./respond.js";
import type { RouteHandler } from "./types.js";

export interface RouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  /** Regex capture groups of the path, URL-decoded. */
  readonly params: readonly string[];
}

export type MethodHandler = (ctx: RouteContext) => Promise<void> | void;

export interface Route {
  /** Anchored regex over the URL's pathname. */
  readonly path: RegExp;
  readonly methods: Readonly<Partial<Record<"GET" | "POST" | "PUT" | "DELETE" | "HEAD", MethodHandler>>>;
}

export function routeTable(routes: readonly Route[]): RouteHandler {
  return async (req, res, url) => {
    for (const route of routes) {
      const match = route.path.exec(url.pathname);
      if (match === null) continue;
      const handler = route.methods[(req.method ?? "GET") as keyof Route["methods"]];
      if (handler === undefined) {
        sendMethodNotAllowed(res, Object.keys(route.methods));
        return true;
      }
      const params = match.slice(1).map((p) => safeDecode(p ?? ""));
      await handler({ req, res, url, params });
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
