/** The store contract against the in-memory store (real-time scheduler, its availability switch). */
import { createMemoryStore } from "../../src/adapters/memory/index.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { storeContract } from "./store-contract.js";

storeContract("memory", async () => {
  const store = createMemoryStore({ scheduler: realScheduler(), autoIndexDelayMs: false });
  return {
    store,
    newEventSource: () => store.createEventSource({ name: "contract" }),
    createDb: async (db) => {
      await store.ensureDb(db);
    },
    deleteDb: async (db) => {
      store.deleteDb(db);
    },
    buildViews: async (db) => {
      store.buildViews(db);
    },
    cut: async () => store.setAvailable(false),
    restore: async () => store.setAvailable(true),
    close: async () => undefined,
  };
});
