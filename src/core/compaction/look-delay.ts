/**
 * How long to wait before reading a running compaction again, on a store
 * that announces no end (CouchDB): the daemon's looks (job-looks.ts), the
 * CouchDB adapter's watcher and the memory store's model of it all follow
 * this one rule.
 *
 * One read every `job_poll_interval_ms` sees a short compaction's end
 * promptly, but a compaction of a large db runs for minutes or hours: read
 * every second, a one-hour compaction costs 3,600 reads that each find it
 * still running. So the wait grows with how long the compaction has run:
 * a quarter of it, never less than the interval and never more than a
 * minute (or the interval, if that is longer). A compaction that ran for T
 * is then seen ended at most max(interval, min(T / 4, 1 min)) late: the
 * slot stays idle a quarter of the compaction's own time at most, and one
 * minute at the very most. Compactions shorter than four intervals are
 * read every interval, as before (all of bench:churn's).
 */

/** The share of a compaction's running time that its end may go unseen. */
export const LOOK_LATE_SHARE = 0.25;

/** The longest wait between two reads of a running compaction, unless the interval itself is longer. */
export const MAX_LOOK_DELAY_MS = 60_000;

/** The wait before the next read of a compaction that has run for `runningForMs`. */
export const lookDelayMs = (runningForMs: number, intervalMs: number): number =>
  Math.max(intervalMs, Math.min(MAX_LOOK_DELAY_MS, Math.floor(Math.max(0, runningForMs) * LOOK_LATE_SHARE)));
