/**
 * upholster's HTTP server: node:http on loopback by default, trying each
 * mounted RouteHandler in turn, each given the server's one guard (who may
 * call what: auth/guard.ts). Unknown paths get CouchDB's 404, a handler
 * that throws gets a 500 (logged) and never takes the server down; requests
 * node's parser refuses (an oversized header: 431) get a JSON body too, and
 * so do those node itself would refuse bodiless (protocol-refusals.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../ports/shell.js";
import type { Guard } from "./auth/guard.js";
import { MAX_DOCUMENT_REQUEST_BYTES, tooLarge } from "./body.js";
import { answerClientError, DEFAULT_MAX_HEADER_BYTES } from "./client-error.js";
import { canonicalNodePath } from "./node-routes.js";
import { refuseExpectation, refuseMissingHost } from "./protocol-refusals.js";
import { requestUrl } from "./request-url.js";
import { sendError, sendNotFound } from "./respond.js";
import type { RequestScope, RouteHandler } from "./types.js";

export interface HttpServerOptions {
  readonly routes: readonly RouteHandler[];
  /** Enforces every route's declared access. */
  readonly guard: Guard;
  /** `[upholster] node_name`: `/_node/{node_name}/...` is served as `/_node/_local/...`. */
  readonly nodeName: string;
  /** Default 127.0.0.1: upholster's API can suspend compaction, so it is not exposed unless asked. */
  readonly host?: string;
  /** 0 picks a free port (tests); see `address()`. */
  readonly port?: number;
  readonly logger: Logger;
  readonly maxBodyBytes?: number;
  /** The request line and headers together; over it, 431. Default: node's `maxHeaderSize`. */
  readonly maxHeaderBytes?: number;
}

export interface HttpAddress {
  readonly host: string;
  readonly port: number;
  /** `http://host:port`, ready to print or fetch. */
  readonly url: string;
}

export interface HttpServer {
  listen(): Promise<HttpAddress>;
  /** Stop accepting, end open connections (feeds included), resolve when closed. */
  close(): Promise<void>;
  address(): HttpAddress | undefined;
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const host = options.host ?? "127.0.0.1";
  // A first refusal by declared length, at the largest any route takes; each route's reader holds its own limit.
  const maxBodyBytes = options.maxBodyBytes ?? MAX_DOCUMENT_REQUEST_BYTES;
  const maxHeaderBytes = options.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
  const logger = options.logger;
  const scope: RequestScope = { guard: options.guard };
  let server: Server | undefined;
  let bound: HttpAddress | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = requestUrl(req.url ?? "/");
    if (url === undefined) {
      sendError(res, 400, "bad_request", `malformed request path ${JSON.stringify(req.url)}`);
      return;
    }
    url.pathname = canonicalNodePath(url.pathname, options.nodeName);
    const declaredBytes = Number(req.headers["content-length"] ?? "0");
    if (Number.isFinite(declaredBytes) && declaredBytes > maxBodyBytes) {
      const error = tooLarge(maxBodyBytes);
      // Close after answering: the client may still be sending a body we will not read.
      sendError(res, error.status, error.error, error.reason, { Connection: "close" });
      req.resume();
      return;
    }
    for (const route of options.routes) {
      if (await route(req, res, url, scope)) return;
    }
    sendNotFound(res);
  };

  return {
    listen() {
      return new Promise((resolve, reject) => {
        // Node's own refusal of a Host-less request has no body; refuseMissingHost answers it with CouchDB's.
        const created = createServer({ maxHeaderSize: maxHeaderBytes, requireHostHeader: false }, (req, res) => {
          if (refuseMissingHost(req, res)) return;
          handle(req, res).catch((error: unknown) => {
            const reason = error instanceof Error ? error.message : String(error);
            logger.error({ method: req.method, path: req.url, err: reason }, "HTTP handler failed");
            if (!res.headersSent) sendError(res, 500, "unknown_error", reason);
            else res.destroy();
          });
        });
        created.on("clientError", (error: Error & { code?: string }, socket) => answerClientError(error, socket, maxHeaderBytes));
        created.on("checkExpectation", refuseExpectation);
        created.once("error", reject);
        created.listen(options.port ?? 0, host, () => {
          created.off("error", reject);
          created.on("error", (error) => logger.error({ err: error.message }, "HTTP server error"));
          const info = created.address() as AddressInfo;
          const shownHost = info.family === "IPv6" ? `[${info.address}]` : info.address;
          bound = { host: info.address, port: info.port, url: `http://${shownHost}:${info.port}` };
          server = created;
          resolve(bound);
        });
      });
    },
    close() {
      const closing = server;
      server = undefined;
      bound = undefined;
      if (closing === undefined) return Promise.resolve();
      return new Promise((resolve) => {
        closing.close(() => resolve());
        closing.closeAllConnections();
      });
    },
    address: () => bound,
  };
}
