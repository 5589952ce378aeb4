/** The indexing contract against the in-memory store (its real view engine), on real time. */
import { createMemoryStore } from "../../src/adapters/memory/index.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { DEFAULT_VIEW_QUERY } from "../../src/ports/views.js";
import { createUpholster } from "../../src/runtime/upholster.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { indexingContract, indexingContractConfig } from "./indexing-contract.js";

indexingContract("memory", async () => {
  const scheduler = realScheduler({ unref: true });
  const store = createMemoryStore({ scheduler });
  const upholster = createUpholster({ store, events: store.createEventSource(), scheduler, logger: createRecordingLogger(), config: indexingContractConfig });
  await upholster.start();
  return {
    store,
    upholster,
    rowsWithoutUpdate: async (db, ddoc, view) => {
      const result = await store.queryView(db, ddoc, view, { ...DEFAULT_VIEW_QUERY, update: "false", reduce: false, limit: 0 });
      return result.total_rows ?? 0;
    },
    deleteDb: async (db) => void store.deleteDb(db),
    viewFileBytes: () => store.totals().viewFileBytes,
    close: async () => {
      await upholster.stop();
      store.close();
    },
  };
});
