/** Test harness: the real memory store, the real service and handlers on a real loopback HTTP server. */
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMemoryStore, type MemoryStore } from "../../src/adapters/memory/index.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { dbUpdatesSubsystem, type DbUpdatesSubsystem } from "../../src/runtime/db-updates/index.js";
import { createLocalAuthenticator, type Authenticator } from "../../src/http/auth/index.js";
import type { RouteHandler } from "../../src/http/types.js";
import type { IniSections } from "../../src/core/shared/ini.js";
import type { Logger } from "../../src/ports/shell.js";

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export const ADMIN = { name: "admin", password: "s3cret" };
export const basicAuth = (name: string, password: string): string => `Basic ${Buffer.from(`${name}:${password}`).toString("base64")}`;
export const ADMIN_AUTH = basicAuth(ADMIN.name, ADMIN.password);

export async function serve(routes: RouteHandler[]): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    void (async () => {
      for (const route of routes) if (await route(req, res, url)) return;
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end('{"error":"not_found","reason":"missing"}\n');
    })().catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Harness {
  readonly store: MemoryStore;
  readonly subsystem: DbUpdatesSubsystem;
  readonly authenticator: Authenticator;
  readonly url: string;
  close(): Promise<void>;
}

export async function startHarness(options: { store?: MemoryStore; ini?: IniSections; logger?: Logger } = {}): Promise<Harness> {
  const scheduler = realScheduler({ unref: true });
  const store = options.store ?? createMemoryStore({ scheduler, autoIndexDelayMs: false });
  const ini: IniSections = {
    admins: { [ADMIN.name]: ADMIN.password },
    chttpd_auth: { iterations: "1000" },
    global_changes: { max_event_delay: "5", max_write_delay: "5", poll_interval_ms: "200", retry_initial_delay_ms: "20", retry_max_delay_ms: "100" },
    ...options.ini,
  };
  const authenticator = await createLocalAuthenticator({ config: ini, clock: scheduler });
  const subsystem = dbUpdatesSubsystem({ store, scheduler, config: ini, logger: options.logger ?? silentLogger, authenticator });
  const source = store.createEventSource();
  await source.start((event) => subsystem.service.handleStoreEvent(event));
  await subsystem.start();
  const http = await serve(subsystem.routes);
  return {
    store,
    subsystem,
    authenticator,
    url: http.url,
    async close() {
      await http.close();
      await source.stop();
      await subsystem.stop();
    },
  };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A plain HTTP GET that collects the raw body (curl-style). */
export function rawGet(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** Streams a response, handing each chunk to `onChunk`; `abort()` closes it. */
export function rawStream(url: string, headers: Record<string, string>) {
  let body = "";
  let headersAt: number | undefined;
  const waiters: (() => void)[] = [];
  let ended = false;
  let status = 0;
  const req = httpRequest(url, { headers }, (res) => {
    status = res.statusCode ?? 0;
    headersAt = Date.now();
    res.setEncoding("utf8");
    res.on("data", (c: string) => {
      body += c;
      for (const w of waiters.splice(0)) w();
    });
    res.on("end", () => {
      ended = true;
      for (const w of waiters.splice(0)) w();
    });
    res.on("error", () => undefined);
  });
  req.on("error", () => undefined);
  req.end();
  return {
    get body() {
      return body;
    },
    get ended() {
      return ended;
    },
    get status() {
      return status;
    },
    get headersReceived() {
      return headersAt !== undefined;
    },
    abort: () => req.destroy(),
  };
}

/** Polls a condition (no timing assertions: a generous deadline only turns a hang into a failure). */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
