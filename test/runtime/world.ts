/**
 * A small world for runtime tests: a VirtualScheduler, the in-memory store
 * (a product adapter, not a mock), a recording logger, and helpers that move
 * virtual time until a condition holds (never a wall-clock assertion).
 */
import { isLeft } from "fp-ts/lib/Either.js";
import { createMemoryStore, type MemoryStore } from "../../src/adapters/memory/index.js";
import { decodeSmooshConfig, type SmooshConfig } from "../../src/core/compaction/index.js";
import type { IniSections } from "../../src/core/shared/ini.js";
import type { GeoIndexFiles } from "../../src/ports/geo.js";
import type { StatePort } from "../../src/ports/shell.js";
import type { CompactionObject, CompactionStore } from "../../src/ports/store.js";
import { createCompactionDaemon, type CompactionDaemon } from "../../src/runtime/compaction/daemon.js";
import { createRecordingLogger, type RecordingLogger } from "../../src/adapters/logging/index.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";

export const START_MS = Date.UTC(2026, 10, 21, 12, 0, 0);

export const smooshConfig = (ini: IniSections = {}): SmooshConfig => {
  const decoded = decodeSmooshConfig(ini);
  if (isLeft(decoded)) throw new Error(`test config does not decode: ${JSON.stringify(decoded.left)}`);
  return decoded.right;
};

export interface World {
  readonly scheduler: VirtualScheduler;
  readonly store: MemoryStore;
  readonly logger: RecordingLogger;
  readonly daemon: CompactionDaemon;
  /** Every startJob/attachJob the daemon made, with the virtual time. */
  readonly jobCalls: { readonly atMs: number; readonly object: CompactionObject; readonly adopt: boolean }[];
}

export interface WorldOptions {
  readonly ini?: IniSections;
  readonly state?: StatePort;
  readonly scheduler?: VirtualScheduler;
  readonly store?: MemoryStore;
  /** Wrap the store the daemon sees (fault injection); the world keeps the real one. */
  readonly wrapStore?: (store: CompactionStore) => CompactionStore;
  /** Geo index files for the daemon to compact; their compactions are recorded in `jobCalls` too. */
  readonly geoFiles?: GeoIndexFiles;
}

export function makeWorld(options: WorldOptions = {}): World {
  const scheduler = options.scheduler ?? new VirtualScheduler({ startMs: START_MS });
  const store = options.store ?? createMemoryStore({ scheduler, autoIndexDelayMs: false });
  const logger = createRecordingLogger();
  const jobCalls: World["jobCalls"] = [];
  const recording: CompactionStore = {
    listDbs: () => store.listDbs(),
    dbInfo: (db) => store.dbInfo(db),
    dbInfos: (dbs) => store.dbInfos(dbs),
    designDocs: (db) => store.designDocs(db),
    viewIndexInfo: (db, ddoc) => store.viewIndexInfo(db, ddoc),
    startJob: (object) => {
      jobCalls.push({ atMs: scheduler.nowMs(), object, adopt: false });
      return store.startJob(object);
    },
    attachJob: (object) => {
      jobCalls.push({ atMs: scheduler.nowMs(), object, adopt: true });
      return store.attachJob(object);
    },
  };
  const geoFiles = options.geoFiles === undefined ? undefined : recordingGeoFiles(options.geoFiles, scheduler, jobCalls);
  const daemon = createCompactionDaemon({
    store: options.wrapStore?.(recording) ?? recording,
    scheduler,
    config: smooshConfig(options.ini),
    logger,
    state: options.state,
    events: store.createEventSource(),
    geoFiles,
  });
  return { scheduler, store, logger, daemon, jobCalls };
}

function recordingGeoFiles(geoFiles: GeoIndexFiles, scheduler: VirtualScheduler, jobCalls: World["jobCalls"]): GeoIndexFiles {
  return {
    files: (db) => geoFiles.files(db),
    file: (db, signature) => geoFiles.file(db, signature),
    compact: (db, signature) => {
      jobCalls.push({ atMs: scheduler.nowMs(), object: { kind: "geo", db, signature }, adopt: false });
      return geoFiles.compact(db, signature);
    },
    onGrowth: (listener) => geoFiles.onGrowth(listener),
  };
}

/**
 * Fill a db with `docs` docs of about `bodyBytes` and rewrite them `rounds`
 * times: the file grows, live data does not (garbage, as in CouchDB).
 */
export function growGarbage(store: MemoryStore, db: string, docs = 1500, rounds = 4, bodyBytes = 600): void {
  if (!store.dbExists(db)) store.createDb(db);
  const payload = "x".repeat(bodyBytes);
  const revs = new Map<string, string>();
  for (let round = 0; round <= rounds; round++) {
    const batch = Array.from({ length: docs }, (_, i) => {
      const id = `doc-${String(i).padStart(6, "0")}`;
      const rev = revs.get(id);
      return rev === undefined ? { _id: id, round, payload } : { _id: id, _rev: rev, round, payload };
    });
    for (const result of store.writeDocs(db, batch)) {
      if (result.ok) revs.set(result.id, result.rev);
    }
  }
}

/** Advance virtual time in steps until `done()` or the step budget runs out; returns whether it held. */
export async function advanceUntil(world: Pick<World, "scheduler" | "daemon">, done: () => boolean, stepMs = 1000, maxSteps = 600): Promise<boolean> {
  for (let i = 0; i < maxSteps; i++) {
    await world.daemon.whenIdle();
    if (done()) return true;
    await world.scheduler.advanceByAsync(stepMs);
  }
  await world.daemon.whenIdle();
  return done();
}

export const fileBytesOf = async (store: MemoryStore, db: string): Promise<number> => (await store.dbInfo(db))?.fileBytes ?? -1;
