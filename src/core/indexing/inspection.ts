/**
 * What an inspection of a db teaches: its seq, its design docs, the indexes
 * they define and where each stands. The indexes to keep up to date are
 * chosen by ken's rules (design-docs.ts); those behind become candidates
 * (upholster) or are offered to the start rule at once (the seed). What a
 * db no longer defines is forgotten. A failed inspection is retried, never
 * dropped (db-queue.ts); a db that is gone is forgotten, as ken does.
 */
import { endInspection, resubmitDb, retryDb } from "./db-queue.js";
import { selectIndexes, shuffled } from "./design-docs.js";
import { checkDeploysSoon, forcedDesignDocs } from "./deploy.js";
import { addCandidate } from "./candidates.js";
import { isFresh } from "./jobs.js";
import { seedStarts } from "./starts.js";
import { copyMap, count, ddocKeyOf, emit, indexKeyOf, log, nextId, update, type Draft, type KnownIndex } from "./state.js";
import type { DbName, IndexingEvent, InspectedIndex } from "./types.js";

type Inspected = Extract<IndexingEvent, { type: "db-inspected" }>;

export const onDbInspected = (d: Draft, event: Inspected): void => {
  const db = endInspection(d, event.requestId);
  if (db === undefined || db !== event.db) return; // the db was deleted meanwhile: the answer is stale
  count(d, "inspections");
  update(d, { dbFailures: d.state.dbFailures.delete(db), designDocs: d.state.designDocs.set(db, event.designDocs) });
  const firstLook = !d.state.dbIndexes.has(db) || d.state.cleanupDue.has(db);
  for (const problem of event.problems) log(d, firstLook ? "warn" : "debug", "ken: design doc skipped", { db, ddoc: problem.ddoc, reason: problem.reason });
  const { selected, skipped } = selectIndexes(event.indexes, event.designDocs, d.state.languages, forcedDesignDocs(d.state, db));
  for (const skip of skipped) log(d, "debug", "ken: index not built", { db, index: skip.name, reason: skip.reason });
  learn(d, db, event.dbSeq, selected);
  const [ordered, prng] = shuffled(selected, d.state.prng);
  update(d, { prng });
  if (d.state.config.catchUp) {
    for (const index of ordered) {
      const known = d.state.known.get(indexKeyOf(db, index.spec));
      if (!isFresh(known)) addCandidate(d, { db, spec: index.spec, dbSeq: event.dbSeq, indexSeq: known?.indexSeq, notBeforeMs: retryAtMs(d, known) });
    }
  } else seedStarts(d, db, event.dbSeq, ordered);
  for (const index of selected) if (isFresh(d.state.known.get(indexKeyOf(db, index.spec)))) checkDeploysSoon(d, db, index.spec.ddocs);
  if (d.state.cleanupDue.has(db)) cleanUp(d, db, event.designDocs);
};

/** After failures, an index waits out its back-off even when its db is inspected again. */
const retryAtMs = (d: Draft, known: KnownIndex | undefined): number => {
  if (known === undefined || known.failures === 0 || known.lastFailureAtMs === undefined) return d.nowMs;
  const { retryInitialMs, retryMaxMs } = d.state.config;
  return known.lastFailureAtMs + Math.min(retryMaxMs, retryInitialMs * 2 ** Math.min(30, known.failures - 1));
};

/** Remember the db's seq and its indexes (with their progress); forget the ones it no longer has. */
const learn = (d: Draft, db: DbName, dbSeq: number, selected: readonly InspectedIndex[]): void => {
  const keys = selected.map((index) => indexKeyOf(db, index.spec));
  let known = d.state.known;
  let waiting = d.state.waiting;
  for (const key of d.state.dbIndexes.get(db) ?? []) {
    if (keys.includes(key)) continue;
    known = known.delete(key);
    waiting = waiting.delete(key);
  }
  let queried = d.state.queried;
  for (const index of selected) {
    const key = indexKeyOf(db, index.spec);
    const before = known.get(key);
    const reported = index.progress?.indexSeq;
    const next: KnownIndex = {
      key,
      db,
      spec: index.spec,
      dbSeq: Math.max(dbSeq, before?.dbSeq ?? 0),
      // Index seqs only move forward: a progress read before a build ended must not undo what it taught.
      indexSeq: reported === undefined ? before?.indexSeq : Math.max(reported, before?.indexSeq ?? 0),
      failures: before?.failures ?? 0,
      lastFailureAtMs: before?.lastFailureAtMs,
      lastError: before?.lastError,
      // The db changed since it gave up: worth one more try.
      gaveUp: before?.gaveUp === true && dbSeq <= before.dbSeq,
      lastBuiltAtMs: before?.lastBuiltAtMs,
    };
    known = known.set(key, next);
    // Someone waits on this index right now (CouchDB's waiting_clients): it counts as queried,
    // unless the one waiting may be our own build (the memory store counts it).
    const ours = d.state.jobs.get(key)?.runningJobId !== undefined;
    if (!ours && (index.progress?.waitingClients ?? 0) > 0) for (const ddoc of index.spec.ddocs) queried = queried.set(ddocKeyOf(db, ddoc), d.nowMs, true);
  }
  update(d, { known, waiting, queried, dbIndexes: d.state.dbIndexes.set(db, keys) });
  for (const key of keys) {
    const entry = known.get(key);
    if (entry?.gaveUp === true) update(d, { waiting: d.state.waiting.delete(key) });
  }
};

const cleanUp = (d: Draft, db: DbName, designDocs: Inspected["designDocs"]): void => {
  const cleanupDue = new Set(d.state.cleanupDue);
  cleanupDue.delete(db);
  update(d, { cleanupDue });
  if (!d.state.config.removeOldIndices) return;
  const requestId = nextId(d);
  update(d, { cleanups: copyMap(d.state.cleanups, (m) => m.set(requestId, db)) });
  emit(d, { type: "cleanup-indexes", requestId, db, designDocs });
};

export const onCleanupDone = (d: Draft, requestId: number, db: DbName, error: string | undefined): void => {
  if (!d.state.cleanups.has(requestId)) return;
  update(d, { cleanups: copyMap(d.state.cleanups, (m) => m.delete(requestId)) });
  count(d, "cleanups");
  if (error === undefined) log(d, "info", "ken: stale index files cleaned", { db });
  else log(d, "warn", "ken: index cleanup failed; tried again after the next design doc change", { db, error });
};

export const onDbMissing = (d: Draft, requestId: number, db: DbName): void => {
  if (endInspection(d, requestId) !== db) return;
  log(d, "debug", "ken: db gone before it was inspected", { db });
  forgetDb(d, db);
};

export const onInspectFailed = (d: Draft, requestId: number, db: DbName, error: string, transient: boolean): void => {
  if (endInspection(d, requestId) !== db) return;
  count(d, "inspectFailures");
  if (!d.state.config.catchUp) {
    log(d, "warn", "ken: db inspection failed; resubmitted", { db, error, transient, retryInMs: d.state.config.resubmitFailedMs });
    resubmitDb(d, db, d.state.config.resubmitFailedMs);
    return;
  }
  const retried = retryDb(d, db, transient);
  const attempts = d.state.dbFailures.get(db);
  if (retried) log(d, "warn", "ken: db inspection failed; retrying", { db, error, transient, attempts });
  else log(d, "error", "ken: db inspection keeps failing; looked at again when it changes", { db, error });
};

/** Forget everything about a db (deleted, or gone); builds of it running are let go. */
export const forgetDb = (d: Draft, db: DbName): void => {
  const keys = d.state.dbIndexes.get(db) ?? [];
  let { known, waiting, jobs } = d.state;

  // Builds of the db running are cancelled; each keeps its channel until its answer comes
  // (the backend lets go), so never more run than the channels allow.
  const running = [...d.state.running.values()].filter((job) => job.db === db);
  for (const job of running) emit(d, { type: "cancel-build", jobId: job.jobId });
  const cancelled = new Set(running.map((job) => job.key));
  for (const key of keys) {
    known = known.delete(key);
    waiting = waiting.delete(key);
    if (!cancelled.has(key)) jobs = jobs.delete(key);
  }
  const cleanupDue = new Set(d.state.cleanupDue);
  cleanupDue.delete(db);
  const again = new Set(d.state.again);
  again.delete(db);
  const inspection = d.state.inspectingDbs.get(db);
  update(d, {
    inspections: copyMap(d.state.inspections, (m) => (inspection === undefined ? undefined : m.delete(inspection))),
    inspectingDbs: copyMap(d.state.inspectingDbs, (m) => m.delete(db)),
    known,
    waiting,
    jobs,
    pending: d.state.pending.delete(db),
    queue: d.state.queue.delete(db),
    dbRetries: d.state.dbRetries.delete(db),
    dbFailures: d.state.dbFailures.delete(db),
    dbIndexes: d.state.dbIndexes.delete(db),
    designDocs: d.state.designDocs.delete(db),
    hints: d.state.hints.delete(ddocKeyOf(db, "")),
    cleanupDue,
    again,
  });
};
