/** What happened in the store -> what the smoosh core is told. */
import type { SmooshEvent } from "../../core/compaction/index.js";
import type { StoreEvent } from "../../ports/events.js";

export const storeEventToSmooshEvent = (event: StoreEvent): SmooshEvent => {
  switch (event.type) {
    case "db-created":
      return { type: "db-created", db: event.db };
    case "db-updated":
      return { type: "object-updated", object: { kind: "db", db: event.db } };
    case "db-deleted":
      return { type: "db-deleted", db: event.db };
    case "ddoc-updated":
      return { type: "design-doc-updated", db: event.db, ddoc: event.ddoc };
    case "view-updated":
      return { type: "object-updated", object: { kind: "view", db: event.db, ddoc: event.ddoc } };
    case "source-resumed":
      // Writes may have gone unheard: the core rescans, under its check budget.
      return { type: "events-missed" };
  }
};
