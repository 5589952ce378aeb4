/**
 * A store decorator for simulations: every answer (infos, listings, job
 * starts, job ends, document reads and writes) arrives after a random delay
 * on the scheduler's clock, so answers to requests made together come back
 * late and in a random order, as from a busy server. Rules that assume
 * prompt, ordered answers show up as failures under it.
 */
import type { Scheduler } from "../../ports/shell.js";
import type { JobHandle, Store } from "../../ports/store.js";

export interface LatencyOptions {
  readonly scheduler: Scheduler;
  /** Uniform in [0, 1): pass a seeded source for replayable runs. */
  readonly random: () => number;
  /** Each answer is delayed by a whole number of ms in [0, maxLatencyMs]. */
  readonly maxLatencyMs: number;
}

export function withLatency(store: Store, options: LatencyOptions): Store {
  const { scheduler, random, maxLatencyMs } = options;
  const later = <T>(work: Promise<T>): Promise<T> =>
    work.then(
      (value) => new Promise<T>((resolve) => scheduler.setTimeout(() => resolve(value), Math.floor(random() * (maxLatencyMs + 1)))),
      (error: unknown) => new Promise<T>((_, reject) => scheduler.setTimeout(() => reject(error), Math.floor(random() * (maxLatencyMs + 1)))),
    );
  const slowJob = (handle: JobHandle): JobHandle => ({ ...bindControls(handle), done: later(handle.done) });
  const dbInfos = store.dbInfos;
  return {
    listDbs: () => later(store.listDbs()),
    dbInfo: (db) => later(store.dbInfo(db)),
    ...(dbInfos !== undefined ? { dbInfos: (dbs: readonly string[]) => later(dbInfos.call(store, dbs)) } : {}),
    // A store whose compaction ends are seen only by reads stays one: the daemon must still look.
    ...(store.jobLookIntervalMs !== undefined ? { jobLookIntervalMs: store.jobLookIntervalMs } : {}),
    // Read when asked: a CouchDB store learns a smaller batch from the server.
    get dbInfosBatchSize() {
      return store.dbInfosBatchSize;
    },
    designDocs: (db) => later(store.designDocs(db)),
    viewIndexInfo: (db, ddoc) => later(store.viewIndexInfo(db, ddoc)),
    startJob: (object) => later(store.startJob(object).then(slowJob)),
    attachJob: (object) => later(store.attachJob(object).then(slowJob)),
    ensureDb: (db) => later(store.ensureDb(db)),
    getDoc: (db, id) => later(store.getDoc(db, id)),
    bulkDocs: (db, docs) => later(store.bulkDocs(db, docs)),
    changes: (db, query) => later(store.changes(db, query)),
    currentSeq: (db) => later(store.currentSeq(db)),
  };
}

/** The optional controls, bound to their handle (they are methods of the adapter's object). */
const bindControls = (handle: JobHandle): Omit<JobHandle, "done"> => ({
  ...(handle.suspend !== undefined ? { suspend: handle.suspend.bind(handle) } : {}),
  ...(handle.resume !== undefined ? { resume: handle.resume.bind(handle) } : {}),
  ...(handle.cancel !== undefined ? { cancel: handle.cancel.bind(handle) } : {}),
});
