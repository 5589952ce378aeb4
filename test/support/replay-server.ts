/**
 * A loopback HTTP server that answers with recorded exchanges, so the adapter
 * is exercised over real HTTP. Routes match method + path (with query);
 * `use()` puts an exchange (or a crafted response) in front; each route can
 * answer several times. Requests are recorded for assertions on request building.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Exchange } from "./fixtures.js";

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

export interface Reply {
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** JSON value, or a raw string written as is (streaming feeds). */
  readonly body: unknown;
  /** Raw body: write `body` (a string) verbatim. */
  readonly raw?: boolean;
  /** Keep the connection open after writing (a continuous feed that has not ended). */
  readonly hold?: boolean;
  /** Never answer at all (a hung server: the client's timeout must fire). */
  readonly silent?: boolean;
}

type Handler = (req: RecordedRequest) => Reply | undefined;

export const replyOf = (e: Exchange): Reply => ({
  status: e.response.status,
  headers: Object.fromEntries(
    Object.entries(e.response.headers).filter(([k]) => !/^(transfer-encoding|content-length)$/i.test(k)),
  ),
  body: e.response.body,
  raw: typeof e.response.body === "string" && e.response.headers["Content-Type"] === "application/json" && e.request.path.includes("feed="),
});

export class ReplayServer {
  readonly requests: RecordedRequest[] = [];
  private readonly handlers: Handler[] = [];
  private readonly held = new Set<ServerResponse>();
  private server: Server | undefined;
  port = 0;

  /** Answer `method path` (exact, query included; or a predicate) with `reply`, in front of older routes. */
  route(method: string, path: string | ((p: string) => boolean), reply: Reply | ((req: RecordedRequest) => Reply)): this {
    this.handlers.unshift((req) => {
      if (req.method !== method) return undefined;
      if (typeof path === "string" ? req.path !== path : !path(req.path)) return undefined;
      return typeof reply === "function" ? reply(req) : reply;
    });
    return this;
  }

  /** Serve a recorded exchange at its own method and path. */
  use(e: Exchange): this {
    return this.route(e.request.method, e.request.path, replyOf(e));
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const recorded: RecordedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
        this.requests.push(recorded);
        let reply: Reply | undefined;
        for (const h of this.handlers) if ((reply = h(recorded)) !== undefined) break;
        if (reply?.silent === true) {
          this.held.add(res);
          return;
        }
        reply ??= { status: 404, body: { error: "not_found", reason: `replay server: no route for ${recorded.method} ${recorded.path}` } };
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        if (reply.body !== null && reply.body !== undefined && recorded.method !== "HEAD") {
          res.write(reply.raw === true && typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body));
        }
        if (reply.hold === true) this.held.add(res);
        else res.end();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return `http://127.0.0.1:${this.port}`;
  }

  /** Write to every held (streaming) response. */
  push(text: string): void {
    for (const res of this.held) res.write(text);
  }

  endHeld(): void {
    for (const res of this.held) {
      if (!res.headersSent) res.destroy();
      else res.end();
    }
    this.held.clear();
  }

  count(method: string, path: string | RegExp): number {
    return this.requests.filter((r) => r.method === method && (typeof path === "string" ? r.path === path : path.test(r.path))).length;
  }

  async stop(): Promise<void> {
    this.endHeld();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }
}
