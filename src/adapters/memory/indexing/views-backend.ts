/**
 * The views backend of the memory store: builds go through the store's
 * `ViewStore.updateViewGroup`, which shares one update per index between
 * queries and the background indexer (never two builds of one index,
 * CouchDB issue 5710, by construction); progress is `_info`'s
 * `update_seq` / `updater_running`; cleanup is the store's `_view_cleanup`
 * job. The memory store runs JavaScript views only, so design docs in
 * another language are left out with that reason.
 */
import { viewIndexesOf } from "../../../core/indexing/index.js";
import type { IndexBackend } from "../../../ports/index-backend.js";
import type { CompactionStore } from "../../../ports/store.js";
import type { ViewStore } from "../../../ports/views.js";

export interface MemoryViewsBackendOptions {
  readonly views: ViewStore;
  /** For the db's seq after a build, and the cleanup job. */
  readonly store: Pick<CompactionStore, "dbInfo" | "startJob">;
}

const JAVASCRIPT_ONLY: ReadonlySet<string> = new Set(["javascript"]);

export function createMemoryViewsBackend(options: MemoryViewsBackendOptions): IndexBackend {
  const { views, store } = options;
  return {
    type: "views",
    field: "views",
    indexesOf: (_db, designDocs) => viewIndexesOf(designDocs, JAVASCRIPT_ONLY),
    async build(db, index) {
      const { indexSeq } = await views.updateViewGroup(db, index.ddocs[0]!);
      const info = await store.dbInfo(db);
      return { indexSeq, dbSeq: info?.updateSeqNumber };
    },
    async progress(db, index) {
      const info = await views.viewGroupInfo(db, index.ddocs[0]!);
      return {
        indexSeq: info.view_index.update_seq,
        updating: info.view_index.updater_running,
        waitingClients: info.view_index.waiting_clients,
      };
    },
    async cleanup(db) {
      const job = await store.startJob({ kind: "cleanup", db });
      const outcome = await job.done;
      if (!outcome.ok) throw new Error(`view cleanup of ${db}: ${outcome.reason}`);
    },
  };
}
