/**
 * What the contract scenarios need from outside the ports, per kind of
 * server: creating and deleting dbs, making a view build, cutting the server
 * off and bringing it back. The store contract and the daemon contract share it.
 */
import { request } from "undici";
import type { MemoryStore } from "../../src/adapters/memory/index.js";
import { TcpProxy } from "../support/tcp-proxy.js";

export interface ServerControl {
  createDb(db: string): Promise<void>;
  deleteDb(db: string): Promise<void>;
  /** Make the server index the design doc's views (CouchDB: a view query; memory: buildViews). */
  buildViews(db: string, ddoc: string, view: string): Promise<void>;
  /** The server goes away / comes back (memory: setAvailable; HTTP: a loopback TCP proxy). */
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** The in-memory store: its own write API, and its availability switch as the outage. */
export const memoryServerControl = (store: MemoryStore): ServerControl => ({
  createDb: async (db) => {
    await store.ensureDb(db);
  },
  deleteDb: async (db) => {
    store.deleteDb(db);
  },
  buildViews: async (db) => {
    await store.buildViews(db);
  },
  cut: async () => store.setAvailable(false),
  restore: async () => store.setAvailable(true),
  // Its map functions' sandbox thread ends with it.
  close: async () => store.close(),
});

export interface HttpServerControl extends ServerControl {
  /** The server's URL through the proxy (credentials kept): what upholster is given, so a cut reaches it. */
  readonly viaProxy: string;
}

/**
 * A server over HTTP (`url` may carry `user:pass@`; loopback only). upholster
 * goes through a TCP proxy that `cut` breaks; the scenario's own requests go
 * straight to the server, so its writes are not what the outage is about.
 */
export const httpServerControl = async (url: string): Promise<HttpServerControl> => {
  const target = new URL(url);
  const proxy = new TcpProxy(Number(target.port || (target.protocol === "https:" ? 443 : 5984)), target.hostname.replace(/^\[|\]$/g, ""));
  const viaProxy = new URL(target.toString());
  viaProxy.hostname = "127.0.0.1";
  viaProxy.port = String(await proxy.start());
  const auth = target.username === "" ? undefined : `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString("base64")}`;
  const plain = new URL(target.toString());
  plain.username = "";
  plain.password = "";
  const base = `${plain.origin}${plain.pathname.replace(/\/$/, "")}`;
  /** 404 (already gone) and 412 (already there) are what the scenarios wanted anyway. */
  const direct = async (method: "GET" | "PUT" | "DELETE", path: string): Promise<void> => {
    const res = await request(`${base}${path}`, { method, headers: auth === undefined ? {} : { authorization: auth } });
    const text = await res.body.text();
    if (res.statusCode >= 400 && res.statusCode !== 404 && res.statusCode !== 412) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text}`);
  };
  return {
    viaProxy: viaProxy.toString(),
    createDb: (db) => direct("PUT", `/${encodeURIComponent(db)}`),
    deleteDb: (db) => direct("DELETE", `/${encodeURIComponent(db)}`),
    buildViews: (db, ddoc, view) => direct("GET", `/${encodeURIComponent(db)}/${ddoc}/_view/${view}?limit=1`),
    cut: async () => proxy.cut(),
    restore: async () => proxy.restore(),
    close: () => proxy.stop(),
  };
};
