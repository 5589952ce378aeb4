/**
 * What happened in the store -> what the indexing core is told. Shard
 * names (CouchDB at shard granularity) become their db: indexes are built
 * through the clustered API, which covers every shard.
 */
import type { IndexingEvent } from "../../core/indexing/index.js";
import type { StoreEvent } from "../../ports/events.js";

export const storeEventToIndexingEvent = (event: StoreEvent, dbNameOf: (name: string) => string): IndexingEvent | undefined => {
  switch (event.type) {
    case "db-updated":
      return { type: "db-updated", db: dbNameOf(event.db) };
    case "db-deleted":
      return { type: "db-deleted", db: dbNameOf(event.db) };
    case "ddoc-updated":
      return { type: "ddoc-updated", db: dbNameOf(event.db), ddoc: event.ddoc };
    case "db-created": // nothing to index until it is written
    case "view-updated": // our own builds (or queries) committing
    case "source-resumed": // handled by the daemon: it looks at every db again
      return undefined;
  }
};
