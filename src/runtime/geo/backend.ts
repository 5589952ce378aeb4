/**
 * The geo backend of the background indexer (type and field
 * `st_indexes`): one index per signature, shared by the design docs that
 * declare it (geoIndexesOf); a build is the manager's shared update, so a
 * query and a background build of one index never run two passes.
 */
import { seqNumber } from "../../adapters/couchdb-http/seq.js";
import { decodeStIndex, geoIndexesOf, stIndexSignature, ST_INDEXES_FIELD, ST_INDEXES_TYPE } from "../../core/geo/index.js";
import type { IndexBackend, IndexSpec } from "../../ports/index-backend.js";
import type { DbName } from "../../ports/store.js";
import { cleanupGeoIndexes } from "./cleanup.js";
import type { GeoIndexState } from "./index-state.js";
import type { GeoIndexManager } from "./manager.js";
import type { GeoStore } from "./resolve.js";
import { GeoIndexStoppedError } from "./update-pass.js";

/** The spec's definition, read again from its first design doc (it may have changed since the discovery). */
async function bindSpec(store: GeoStore, manager: GeoIndexManager, db: DbName, spec: IndexSpec): Promise<GeoIndexState> {
  const ddocId = spec.ddocs[0]!;
  const ddoc = await store.getDoc(db, ddocId);
  const declared = ddoc?.["st_indexes"] as Record<string, unknown> | undefined;
  const raw = typeof declared === "object" && declared !== null ? declared[spec.entry] : undefined;
  const decoded = decodeStIndex(spec.entry, raw);
  if (decoded._tag === "Left") throw new GeoIndexStoppedError(`${ddocId}: ${ddoc === undefined ? "the design doc is gone" : decoded.left}`);
  if (stIndexSignature(decoded.right) !== spec.key) throw new GeoIndexStoppedError(`${ddocId}: st_indexes.${spec.entry} changed since it was listed`);
  return manager.bind(db, spec.key, decoded.right, spec.ddocs, true);
}

export function createGeoBackend(store: GeoStore, manager: GeoIndexManager): IndexBackend {
  return {
    type: ST_INDEXES_TYPE,
    field: ST_INDEXES_FIELD,
    indexesOf: (_db, designDocs) => geoIndexesOf(designDocs),
    async build(db, spec, options) {
      const state = await bindSpec(store, manager, db, spec);
      const indexSeq = await manager.update(state, options.targetSeq, options.onProgress);
      return { indexSeq, dbSeq: seqNumber(await store.currentSeq(db)) };
    },
    async progress(db, spec) {
      const state = await manager.open(db, spec.key);
      return { indexSeq: state.position.seqNumber, updating: state.update.isRunning, waitingClients: state.update.waitingClients };
    },
    async cleanup(db, designDocs) {
      await cleanupGeoIndexes(manager, db, designDocs);
    },
    status: () => ({ ...manager.counters, durable: manager.storage.durable }),
  };
}
