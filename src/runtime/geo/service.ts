/**
 * GeoService (src/ports/geo.ts) over the index manager: what the `_geo`,
 * `_geo_info` and `_geo_cleanup` routes ask. A query waits until its index
 * reaches the db's seq at the time of the call, unless `stale` (hastings'
 * AwaitSeq 0); `stale=update_after` answers first and starts the update.
 */
import type { JsonObject } from "../../core/geo/index.js";
import { seqNumber } from "../../adapters/couchdb-http/seq.js";
import type { PreparedGeoQuery } from "../../core/geo/index.js";
import { errorText } from "../../core/shared/error-text.js";
import { GeoError, type GeoIndexInfoBody, type GeoIndexRef, type GeoSearchAnswer, type GeoService } from "../../ports/geo.js";
import type { Logger } from "../../ports/shell.js";
import type { DbName } from "../../ports/store.js";
import { cleanupGeoIndexes } from "./cleanup.js";
import type { GeoIndexState } from "./index-state.js";
import type { GeoIndexManager } from "./manager.js";
import { resolveIndex, type GeoStore } from "./resolve.js";
import { GeoIndexStoppedError } from "./update-pass.js";

export interface GeoServiceDeps {
  readonly store: GeoStore;
  readonly manager: GeoIndexManager;
  readonly logger: Logger;
  /** A query came for a db's design doc (the indexer may favour its indexes). */
  readonly onQuery?: ((db: DbName, ddoc: string) => void) | undefined;
}

/** An update that failed: the function's fault (a 500 naming it), else the store's (rethrown). */
const updateFailure = (error: unknown): unknown =>
  error instanceof GeoIndexStoppedError ? new GeoError(500, "geo_index_error", error.message) : error;

export function createGeoService(deps: GeoServiceDeps): GeoService {
  const { store, manager } = deps;

  const stateOf = async (ref: GeoIndexRef): Promise<GeoIndexState> => {
    const { definition, signature } = await resolveIndex(store, ref);
    return manager.bind(ref.db, signature, definition, [ref.ddoc], false);
  };

  const dbSeq = async (db: DbName): Promise<number> => seqNumber(await store.currentSeq(db)) ?? 0;

  const docsOf = async (db: DbName, ids: readonly string[]): Promise<Map<string, JsonObject | null>> => {
    const docs = new Map<string, JsonObject | null>();
    for (const id of new Set(ids)) docs.set(id, ((await store.getDoc(db, id)) as JsonObject | undefined) ?? null);
    return docs;
  };

  return {
    async search(ref, prepared: PreparedGeoQuery): Promise<GeoSearchAnswer> {
      const state = await stateOf(ref);
      deps.onQuery?.(ref.db, ref.ddoc);
      const stale = prepared.query.stale;
      if (stale === false) await manager.update(state, await dbSeq(ref.db)).catch((error: unknown) => Promise.reject(updateFailure(error)));
      else if (stale === "update_after") {
        void dbSeq(ref.db)
          .then((seq) => manager.update(state, seq))
          .catch((error: unknown) => deps.logger.info({ db: ref.db, signature: state.signature, err: errorText(error) }, "a geo index update after a stale query failed"));
      }
      const page = state.index.search(prepared);
      const docs = prepared.query.includeDocs ? await docsOf(ref.db, page.hits.map((hit) => hit.id)) : new Map<string, JsonObject | null>();
      return { page, docs: (id) => docs.get(id), indexSeq: state.position.seqNumber };
    },

    async info(ref): Promise<GeoIndexInfoBody> {
      const state = await stateOf(ref);
      return {
        name: `${ref.ddoc}/${ref.index}`,
        geo_index: {
          doc_count: state.index.docCount,
          disk_size: manager.storage.fileBytes(state),
          data_size: manager.storage.activeBytes(state),
          signature: state.signature,
          update_seq: state.position.seqNumber,
          updater_running: state.update.isRunning,
          compact_running: state.compacting,
        },
      };
    },

    async cleanup(db) {
      if ((await store.dbInfo(db)) === undefined) throw new GeoError(404, "not_found", "Database does not exist.");
      const designDocs = await store.designDocs(db);
      await cleanupGeoIndexes(manager, db, designDocs);
    },
  };
}
