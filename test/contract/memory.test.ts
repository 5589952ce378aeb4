/** The store contract against the in-memory store (real-time scheduler, its availability switch). */
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
