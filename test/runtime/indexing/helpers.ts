/** The indexer on the memory store and a virtual clock, and a way to wait for it without timed assertions. */
import { createMemoryStore, type MemoryStore } from "../../../src/adapters/memory/index.js";
import { createRecordingLogger, type RecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import { decodeIndexingConfig, type IndexingConfig } from "../../../src/core/indexing/index.js";
import type { IniSections } from "../../../src/core/shared/ini.js";
import type { IndexBackend } from "../../../src/ports/index-backend.js";
import type { StatePort } from "../../../src/ports/shell.js";
import { indexingSubsystem, type IndexingSubsystem } from "../../../src/runtime/indexing/subsystem.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";

export const VIEWS = { views: { by_n: { map: "function (doc) { if (doc.n !== undefined) emit(doc.n, 1); }", reduce: "_sum" }, all: { map: "function (doc) { emit(doc._id); }" } } };

export interface Rig {
  readonly scheduler: VirtualScheduler;
  readonly store: MemoryStore;
  readonly logger: RecordingLogger;
  readonly state: StatePort;
  indexing: IndexingSubsystem;
  /** A new indexer on the same store and state (a restart). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export const config = (ini: IniSections = {}): IndexingConfig => {
  const decoded = decodeIndexingConfig(ini);
  if (decoded._tag === "Left") throw new Error(JSON.stringify(decoded.left));
  return decoded.right;
};

export async function rig(options: { ini?: IniSections; backends?: IndexBackend[]; state?: StatePort } = {}): Promise<Rig> {
  const scheduler = new VirtualScheduler({ startMs: Date.UTC(2026, 0, 1) });
  const store = createMemoryStore({ scheduler });
  const logger = createRecordingLogger();
  const state = options.state ?? createMemoryStatePort();
  const make = (): IndexingSubsystem =>
    indexingSubsystem({ store, scheduler, logger, state, config: config(options.ini), backends: options.backends, seed: 42 });
  const events = store.createEventSource();
  let current = make();
  await events.start((event) => current.handleStoreEvent(event));
  await current.start();
  const r: Rig = {
    scheduler,
    store,
    logger,
    state,
    indexing: current,
    async restart() {
      let stopped = false;
      const stopping = current.stop().then(() => (stopped = true));
      while (!stopped) await scheduler.advanceByAsync(100);
      await stopping;
      current = make();
      r.indexing = current;
      await current.start();
    },
    async close() {
      // Stopping waits for effects in flight; some (a memory store cleanup job) need the clock to move.
      let stopped = false;
      const stopping = current.stop().then(() => (stopped = true));
      while (!stopped) await scheduler.advanceByAsync(100);
      await stopping;
      await events.stop();
      store.close();
    },
  };
  return r;
}

/**
 * Let virtual time pass (20 ms a step) and real work finish (map functions
 * run in a worker thread) until `done` holds. A bound on steps, not on time:
 * a slow machine takes longer, it does not fail.
 */
export async function until<T>(r: Pick<Rig, "scheduler">, done: () => T | undefined | false | Promise<T | undefined | false>, what: string, maxSteps = 5000): Promise<T> {
  for (let i = 0; i < maxSteps; i++) {
    const value = await done();
    if (value !== undefined && value !== false) return value;
    await r.scheduler.advanceByAsync(20);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`never happened: ${what}`);
}

export const writeDocs = (store: MemoryStore, db: string, count: number, from = 0, round = 0): void => {
  store.writeDocs(db, Array.from({ length: count }, (_, i) => ({ _id: `doc-${from + i}`, n: from + i, round })));
};

/** Update docs already written (their current revs looked up). */
export async function updateDocs(store: MemoryStore, db: string, count: number, round: number): Promise<void> {
  const docs = [];
  for (let i = 0; i < count; i++) {
    const doc = await store.getDoc(db, `doc-${i}`);
    docs.push({ _id: `doc-${i}`, ...(doc === undefined ? {} : { _rev: doc._rev }), n: i, round });
  }
  store.writeDocs(db, docs);
}

/** The largest lag of the db's view indexes (of one design doc), live. */
export async function lagOf(r: Rig, db: string, ddoc?: string): Promise<number | null | undefined> {
  const lags = (await r.indexing.daemon.lag(db, ddoc)).filter((l) => l.type === "views");
  return lags.length === 0 ? undefined : Math.max(...lags.map((l) => l.lag ?? Number.POSITIVE_INFINITY));
}
