/**
 * The store contract against the in-memory store (real-time scheduler, its
 * availability switch), as embedded and as it models CouchDB's unannounced
 * compaction ends (`jobLookIntervalMs`).
 */
import { createMemoryStore } from "../../src/adapters/memory/index.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { memoryServerControl } from "./server-control.js";
import { storeContract } from "./store-contract.js";

storeContract("memory", async () => {
  const store = createMemoryStore({ scheduler: realScheduler(), autoIndexDelayMs: false });
  return {
    ...memoryServerControl(store),
    store,
    newEventSource: () => store.createEventSource({ name: "contract" }),
  };
});

storeContract("memory, compaction ends seen by reads as on CouchDB", async () => {
  const store = createMemoryStore({ scheduler: realScheduler(), autoIndexDelayMs: false, jobLookIntervalMs: 200 });
  return {
    ...memoryServerControl(store),
    store,
    newEventSource: () => store.createEventSource({ name: "contract" }),
  };
});
