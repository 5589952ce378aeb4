/**
 * A DaemonHarness over HTTP (PouchDB Server, a real CouchDB): every upholster
 * instance reaches the server through a loopback TCP proxy that the outage
 * scenario cuts; the scenario's own client goes straight to the server, so its
 * writes are not what the outage is about. Instances of one harness share a
 * StatePort (the feed seq and compacted seqs), as a restarted daemon would.
 */
import { request } from "undici";
import { createCouchStore, type CouchStoreHandle, type CouchStoreOptions } from "../../src/adapters/couchdb-http/index.js";
import { captureLogger } from "../support/logger.js";
import { memoryState } from "../support/memory-state.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import type { DaemonHarness } from "./daemon-contract.js";

/** Short intervals so the scenarios see changes in well under a second. */
export const fastAdapterOptions = {
  pollIntervalMs: 200,
  heartbeatMs: 1_000,
  jobPollIntervalMs: 200,
  requestTimeoutMs: 10_000,
  retry: { retries: 1, baseMs: 50, capMs: 200 },
} satisfies Partial<CouchStoreOptions>;

/** `url` may carry `user:pass@`; it must be a loopback address (the proxy listens on 127.0.0.1). */
export const httpDaemonHarness = async (url: string): Promise<DaemonHarness> => {
  const target = new URL(url);
  const proxy = new TcpProxy(Number(target.port || (target.protocol === "https:" ? 443 : 5984)), target.hostname.replace(/^\[|\]$/g, ""));
  const port = await proxy.start();
  const viaProxy = new URL(target.toString());
  viaProxy.hostname = "127.0.0.1";
  viaProxy.port = String(port);
  const state = memoryState();
  const client = createCouchStore({ url, logger: captureLogger(), state: memoryState(), ...fastAdapterOptions });
  const instances: CouchStoreHandle[] = [];
  const auth = target.username === "" ? undefined : `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString("base64")}`;
  const plain = new URL(target.toString());
  plain.username = "";
  plain.password = "";
  const base = `${plain.origin}${plain.pathname.replace(/\/$/, "")}`;
  const direct = async (method: "GET" | "DELETE", path: string): Promise<void> => {
    const res = await request(`${base}${path}`, { method, headers: auth === undefined ? {} : { authorization: auth } });
    const text = await res.body.text();
    if (res.statusCode >= 400 && res.statusCode !== 404) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text}`);
  };
  return {
    store: client.store,
    newInstance: () => {
      const handle = createCouchStore({ url: viaProxy.toString(), logger: captureLogger(), state, ...fastAdapterOptions });
      instances.push(handle);
      return { store: handle.store, events: handle.events, close: () => handle.close() };
    },
    createDb: (db) => client.store.ensureDb(db),
    deleteDb: (db) => direct("DELETE", `/${encodeURIComponent(db)}`),
    buildViews: (db, ddoc, view) => direct("GET", `/${encodeURIComponent(db)}/${ddoc}/_view/${view}?limit=1`),
    cut: async () => proxy.cut(),
    restore: async () => proxy.restore(),
    close: async () => {
      for (const handle of instances) await handle.close();
      await client.close();
      await proxy.stop();
    },
  };
};
