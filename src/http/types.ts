import type { IncomingMessage, ServerResponse } from "node:http";
import type { Guard } from "./auth/guard.js";

/** What upholster's server gives every route along with the request. */
export interface RequestScope {
  /** The server's one access rule (auth/guard.ts); routes declare what they need and ask it. */
  readonly guard: Guard;
}

/**
 * A piece of upholster's HTTP API. The server tries each mounted handler in
 * turn; a handler returns true when it answered the request. `scope` is
 * absent only when a handler is served by some other server (an embedder's,
 * a test harness): it then falls back to its own guard, or refuses.
 */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL, scope?: RequestScope) => Promise<boolean>;
