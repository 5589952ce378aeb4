/**
 * A DaemonHarness over HTTP (PouchDB Server, a real CouchDB): every upholster
 * instance reaches the server through the proxy of `httpServerControl`, which
 * the outage scenario cuts; the scenario's own client goes straight to the
 * server. Instances of one harness share a
 * StatePort (the feed seq and compacted seqs), as a restarted daemon would.
 */
import { createCouchStore, type CouchStoreHandle, type CouchStoreOptions } from "../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../src/adapters/state/index.js";
import type { DaemonHarness } from "./daemon-contract.js";
import { httpServerControl } from "./server-control.js";

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
  const server = await httpServerControl(url);
  const state = createMemoryStatePort();
  const client = createCouchStore({ url, logger: createRecordingLogger(), state: createMemoryStatePort(), ...fastAdapterOptions });
  const instances: CouchStoreHandle[] = [];
  return {
    ...server,
    store: client.store,
    newInstance: () => {
      const handle = createCouchStore({ url: server.viaProxy, logger: createRecordingLogger(), state, ...fastAdapterOptions });
      instances.push(handle);
      return { store: handle.store, events: handle.events, close: () => handle.close() };
    },
    close: async () => {
      for (const handle of instances) await handle.close();
      await client.close();
      await server.close();
    },
  };
};
