import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * A piece of upholster's HTTP API. The server tries each mounted handler in
 * turn; a handler returns true when it answered the request.
 */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;
