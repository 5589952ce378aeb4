/**
 * GeoIndexFiles (src/ports/geo.ts): the geo index files as the compaction
 * daemon sees them. Sizes come from the storage (real bytes in a
 * directory, GeoIndex.sizes() in memory); a compaction rewrites the index
 * as one snapshot after the appends queued before it.
 */
import type { GeoIndexFile, GeoIndexFiles } from "../../ports/geo.js";
import type { DbName, JobHandle, JobOutcome } from "../../ports/store.js";
import { errorText } from "../../core/shared/error-text.js";
import type { GeoIndexState } from "./index-state.js";
import type { GeoIndexManager } from "./manager.js";

const fileOf = (manager: GeoIndexManager, state: GeoIndexState): GeoIndexFile => ({
  db: state.db,
  signature: state.signature,
  ddocs: state.ddocs,
  fileBytes: manager.storage.fileBytes(state),
  activeBytes: manager.storage.activeBytes(state),
  updateSeq: state.position.seqNumber,
  compactionRunning: state.compacting,
});

async function openStates(manager: GeoIndexManager, db: DbName): Promise<GeoIndexState[]> {
  const states: GeoIndexState[] = [];
  for (const signature of manager.openSignatures(db)) {
    const state = await manager.opened(db, signature)?.catch(() => undefined);
    if (state !== undefined && !state.dropped) states.push(state);
  }
  return states;
}

async function listFiles(manager: GeoIndexManager, db: DbName): Promise<GeoIndexFile[]> {
  const open = (await openStates(manager, db)).map((state) => fileOf(manager, state));
  const known = new Set(open.map((file) => file.signature));
  const stored = (await manager.storage.list(db))
    .filter((file) => !known.has(file.signature))
    .map((file): GeoIndexFile => ({ db, signature: file.signature, ddocs: [], fileBytes: file.fileBytes, activeBytes: file.activeBytes, updateSeq: file.updateSeq, compactionRunning: false }));
  return [...open, ...stored].sort((a, b) => (a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0));
}

async function compactState(manager: GeoIndexManager, state: GeoIndexState): Promise<JobOutcome> {
  const before = manager.storage.fileBytes(state);
  state.compacting = true;
  try {
    await manager.storage.saveSnapshot(state);
    return { ok: true, reclaimedBytes: Math.max(0, before - manager.storage.fileBytes(state)) };
  } catch (error) {
    return { ok: false, reason: errorText(error) };
  } finally {
    state.compacting = false;
  }
}

export function geoIndexFiles(manager: GeoIndexManager): GeoIndexFiles {
  return {
    files: (db) => listFiles(manager, db),
    async file(db, signature) {
      return (await listFiles(manager, db)).find((file) => file.signature === signature);
    },
    async compact(db, signature): Promise<JobHandle> {
      const exists = manager.opened(db, signature) !== undefined || (await manager.storage.list(db)).some((file) => file.signature === signature);
      if (!exists) return { done: Promise.resolve({ ok: false, reason: `no geo index ${signature} in ${db}` }) };
      const state = await manager.open(db, signature);
      return { done: compactState(manager, state) };
    },
    onGrowth: (listener) => manager.onGrowth(listener),
  };
}
