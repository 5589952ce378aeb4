/**
 * The CouchDB 4 index builder's pending updates (fabric2_index): a written
 * db is remembered with the time of its FIRST update since it was last
 * taken (later updates do not push it back, so a db written without pause
 * is still looked at), and taken once that update is older than
 * `index_updater_delay_msec`. Pending dbs are swept at most every
 * `index_updater_resolution_msec`, plus a jitter drawn from the core's PRNG
 * (up to a tenth of the resolution), so sweeps of many instances do not
 * fall in step. Nothing is swept while nothing is pending (no idle timer).
 */
import { nextFloat } from "../shared/prng.js";
import { enqueueDb } from "./db-queue.js";
import { count, log, update, type Draft, type IndexingState } from "./state.js";
import type { DbName } from "./types.js";

/** A db was written: pending from now, unless it is already (its first update counts), or queued to be looked at. */
export const notePending = (d: Draft, db: DbName): void => {
  const { pending, queue, ignored, config } = d.state;
  if (ignored.has(db) || pending.timeOf(db) !== undefined || queue.has(db)) return;
  if (pending.size + queue.size >= config.maxQueuedDbs) {
    count(d, "droppedAtCapacity");
    log(d, "warn", "ken: too many dbs waiting, an update is dropped", { db, limit: config.maxQueuedDbs });
    return;
  }
  update(d, { pending: pending.set(db, d.nowMs, true) });
};

/** When the next sweep will take something: the earliest first update plus the delay, not before the resolution allows. */
export const nextSweepAtMs = (state: IndexingState): number | undefined => {
  const earliest = state.pending.earliest();
  if (earliest === undefined) return undefined;
  return Math.max(earliest.atMs + state.config.delayMs, state.lastSweepAtMs + state.config.resolutionMs + jitterMs(state));
};

/** The jitter of the next sweep: a draw from the state's PRNG, advanced only when a sweep happens. */
const jitterMs = (state: IndexingState): number => Math.floor(nextFloat(state.prng)[0] * (state.config.resolutionMs / 10));

/** Take every db whose first pending update is at least the delay old, into the queue. */
export const sweepPending = (d: Draft): void => {
  const dueAtMs = nextSweepAtMs(d.state);
  if (dueAtMs === undefined || d.nowMs < dueAtMs) return;
  const { rest, taken } = d.state.pending.takeUntil(d.nowMs - d.state.config.delayMs);
  update(d, { pending: rest, lastSweepAtMs: d.nowMs, prng: nextFloat(d.state.prng)[1] });
  for (const { key: db } of taken) enqueueDb(d, db);
};
