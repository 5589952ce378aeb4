/**
 * ken's queue of databases: de-duplicated, first in first out, bounded. A
 * db taken from it is inspected (design docs, seq, where each index
 * stands); at most `max_inspections` at once (ken has one db worker).
 *
 * A db that cannot be looked at now comes back later, never silently lost
 * (CouchDB issue 5392: a transient error, maintenance mode, a node down):
 *
 * - with `catch_up` (upholster), after a capped exponential back-off, for
 *   ever when the error is transient, `retry_max_attempts` times otherwise;
 * - without (the seed), ken's resubmit: 60 s after a refusal, 5 s after a
 *   failure, and the db is skipped meanwhile.
 */
import { cappedExponentialMs } from "../shared/backoff.js";
import { copyMap, count, emit, log, nextId, update, type Draft } from "./state.js";
import type { DbName } from "./types.js";

export const enqueueDb = (d: Draft, db: DbName): void => {
  if (d.state.ignored.has(db)) return;
  const { fifo, result } = d.state.queue.push(db, true);
  if (result === "full") {
    count(d, "droppedAtCapacity");
    log(d, "warn", "ken: the db queue is full, a db is dropped", { db, limit: d.state.queue.limit });
    return;
  }
  if (result === "added") {
    // Queued now: a pending update of it is covered by the inspection to come.
    update(d, { queue: fifo, pending: d.state.pending.delete(db) });
    count(d, "dbsQueued");
  }
};

/** Inspect queued dbs while there is room; a db already being inspected is looked at again once that ends. */
export const pumpInspections = (d: Draft): void => {
  if (!d.state.config.enabled) return;
  const deferred: DbName[] = [];
  while (d.state.inspections.size < d.state.config.maxInspections) {
    const next = d.state.queue.shift();
    if (next === undefined) break;
    update(d, { queue: next.fifo });
    const db = next.key;
    if (d.state.ignored.has(db) || d.state.dbRetries.timeOf(db) !== undefined) continue;
    if (d.state.inspectingDbs.has(db)) {
      deferred.push(db);
      continue;
    }
    const requestId = nextId(d);
    update(d, {
      inspections: copyMap(d.state.inspections, (m) => m.set(requestId, db)),
      inspectingDbs: copyMap(d.state.inspectingDbs, (m) => m.set(db, requestId)),
    });
    emit(d, { type: "inspect-db", requestId, db });
  }
  for (const db of deferred) update(d, { again: new Set([...d.state.again, db]) });
};

/** An inspection ended (whatever the outcome): forget it, and queue the db again if it was asked for meanwhile. */
export const endInspection = (d: Draft, requestId: number): DbName | undefined => {
  const db = d.state.inspections.get(requestId);
  if (db === undefined) return undefined;
  update(d, {
    inspections: copyMap(d.state.inspections, (m) => m.delete(requestId)),
    inspectingDbs: copyMap(d.state.inspectingDbs, (m) => m.delete(db)),
  });
  if (d.state.again.has(db)) {
    const again = new Set(d.state.again);
    again.delete(db);
    update(d, { again });
    enqueueDb(d, db);
  }
  return db;
};

/** The seed's resubmit (ken's `ken_resubmit`): the db comes back after `delayMs`, skipped until then. */
export const resubmitDb = (d: Draft, db: DbName, delayMs: number): void => {
  if (d.state.dbRetries.timeOf(db) !== undefined) return;
  update(d, { dbRetries: d.state.dbRetries.set(db, d.nowMs + delayMs, { why: "resubmit" }) });
  count(d, "resubmits");
};

/** upholster's retry of a db that could not be inspected; false when it gives up (non-transient, too many attempts). */
export const retryDb = (d: Draft, db: DbName, transient: boolean): boolean => {
  const attempts = (d.state.dbFailures.get(db) ?? 0) + 1;
  const { retryInitialMs, retryMaxMs, retryMaxAttempts } = d.state.config;
  if (!transient && attempts > retryMaxAttempts) {
    update(d, { dbFailures: d.state.dbFailures.delete(db) });
    return false;
  }
  const atMs = d.nowMs + cappedExponentialMs(retryInitialMs, retryMaxMs, attempts - 1);
  update(d, { dbFailures: d.state.dbFailures.set(db, attempts), dbRetries: d.state.dbRetries.set(db, atMs, { why: "retry" }) });
  count(d, "resubmits");
  return true;
};

/** Dbs whose resubmit or retry is due go back into the queue. */
export const fireDueRetries = (d: Draft): void => {
  const { rest, taken } = d.state.dbRetries.takeUntil(d.nowMs);
  if (taken.length === 0) return;
  update(d, { dbRetries: rest });
  for (const { key: db } of taken) enqueueDb(d, db);
};
