/**
 * The daemon contract against the in-memory store (real-time scheduler; its
 * availability switch is the outage), as embedded and as it models CouchDB's
 * unannounced compaction ends (`jobLookIntervalMs`: the daemon looks).
 */
import { createMemoryStore } from "../../src/adapters/memory/index.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { daemonContract } from "./daemon-contract.js";
import { memoryServerControl } from "./server-control.js";

daemonContract("memory", async () => {
  // Compactions that take a few seconds, as on a real server with real dbs: the adoption
  // scenario needs one still running when upholster re-checks the db.
  const store = createMemoryStore({ scheduler: realScheduler(), autoIndexDelayMs: false, model: { compactionStartupMs: 3_000 } });
  return {
    ...memoryServerControl(store),
    store,
    // The same name resumes where the last instance stopped: the memory store's saved feed position.
    newInstance: () => ({ store, events: store.createEventSource({ name: "daemon" }), close: async () => undefined }),
  };
});

daemonContract("memory, compaction ends seen by reads as on CouchDB", async () => {
  const store = createMemoryStore({ scheduler: realScheduler(), autoIndexDelayMs: false, model: { compactionStartupMs: 3_000 }, jobLookIntervalMs: 250 });
  return {
    ...memoryServerControl(store),
    store,
    newInstance: () => ({ store, events: store.createEventSource({ name: "daemon" }), close: async () => undefined }),
  };
});
