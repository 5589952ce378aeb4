/**
 * The store contract against a real CouchDB named by COUCHDB_URL
 * (e.g. `COUCHDB_URL=http://admin:pass@127.0.0.1:5984 npm test`), through a
 * loopback TCP proxy that can be cut for the outage scenario. Skipped, with a
 * message, when COUCHDB_URL is not set. Only loopback addresses are allowed.
 */
import { describe, it } from "vitest";
import { createCouchStore } from "../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../src/adapters/state/index.js";
import { httpServerControl } from "./server-control.js";
import { storeContract } from "./store-contract.js";

const raw = process.env.COUCHDB_URL;
const target = raw === undefined || raw === "" ? undefined : new URL(raw);
const loopback = target !== undefined && /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(target.hostname);

if (target === undefined || !loopback) {
  const why = target === undefined ? "COUCHDB_URL is not set" : `COUCHDB_URL host ${target.hostname} is not a loopback address`;
  console.info(`store contract against CouchDB skipped: ${why} (run: COUCHDB_URL=http://admin:pass@127.0.0.1:5984 npm test)`);
  describe.skip(`store contract: couchdb (${why})`, () => {
    it("needs COUCHDB_URL", () => undefined);
  });
} else {
  storeContract("couchdb", async () => {
    const server = await httpServerControl(target.toString());
    const options = { url: server.viaProxy, logger: createRecordingLogger(), state: createMemoryStatePort(), pollIntervalMs: 500, heartbeatMs: 1_000, jobPollIntervalMs: 250, requestTimeoutMs: 5_000, retry: { retries: 1, baseMs: 50, capMs: 200 } };
    const main = createCouchStore(options);
    const sources: Array<ReturnType<typeof createCouchStore>> = [];
    return {
      ...server,
      store: main.store,
      newEventSource: () => {
        const handle = createCouchStore(options);
        sources.push(handle);
        return handle.events;
      },
      close: async () => {
        for (const s of sources) await s.close();
        await main.close();
        await server.close();
      },
    };
  });
}
