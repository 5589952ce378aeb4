/**
 * CouchDB's db compactions end unannounced: no event says so, and a client
 * learns of the end only from a db info read made after it (`compact_running`
 * false). The CouchDB adapter's watcher sees it in the daemon's own looks
 * (one read per `job_poll_interval_ms`), and reads by itself after one and a
 * half intervals without one.
 *
 * With `jobLookIntervalMs`, the memory store models that, so that a
 * simulation prices a tuning as CouchDB will: a db compaction's handle
 * settles at the first `dbInfo`/`dbInfos` read of its db after the swap, or
 * at the watcher's own read (counted in `ownReads`) one and a half waits
 * after the swap. The wait is the interval while the job is young and grows
 * with its running time, as the CouchDB adapter's does
 * (core/compaction/look-delay.ts). While the store is switched off that read
 * fails, and the watcher tries again as long after. The CouchDB adapter's
 * own read comes one and a half waits after the last read of the db, so it
 * can come sooner; with the daemon looking at its jobs by the same rule,
 * neither fires. A job the caller cancels
 * ends at once: the caller knows.
 */
import type { JobHandle, JobOutcome } from "../../ports/store.js";
import type { Scheduler } from "../../ports/shell.js";
import { lookDelayMs } from "../../core/compaction/look-delay.js";

/** As the CouchDB adapter's watcher (`OWN_LOOK_AFTER_WAITS` there). */
const OWN_READ_AFTER_WAITS = 1.5;

export class UnannouncedEnds {
  /** Db -> who waits for its next info read (ended jobs not seen yet). */
  private readonly waiters = new Map<string, Set<() => void>>();
  /** The watcher's own reads: requests a CouchDB client would have made. */
  ownReads = 0;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly intervalMs: number,
    /** Whether a read would be answered now (the store's availability switch). */
    private readonly canRead: () => boolean = () => true,
  ) {}

  /** The store answered an info read of `db`: a compaction of it that ended is seen now. */
  noteRead(db: string): void {
    const waiting = this.waiters.get(db);
    if (waiting === undefined) return;
    this.waiters.delete(db);
    for (const wake of waiting) wake();
  }

  /** `handle`, with its end seen as a CouchDB client sees it. */
  watch(db: string, handle: JobHandle): JobHandle {
    const watchedSinceMs = this.scheduler.nowMs();
    let cancelled = false;
    const cancel = handle.cancel?.bind(handle);
    return {
      done: handle.done.then((outcome) => (cancelled ? outcome : this.seen(db, outcome, this.scheduler.nowMs() - watchedSinceMs))),
      ...(handle.suspend === undefined ? {} : { suspend: handle.suspend.bind(handle) }),
      ...(handle.resume === undefined ? {} : { resume: handle.resume.bind(handle) }),
      ...(cancel === undefined
        ? {}
        : {
            cancel: () => {
              cancelled = true;
              return cancel();
            },
          }),
    };
  }

  /** `ranForMs`: how long the job ran until its swap (the watcher's wait then). */
  private seen(db: string, outcome: JobOutcome, ranForMs: number): Promise<JobOutcome> {
    return new Promise((resolve) => {
      const waitMs = OWN_READ_AFTER_WAITS * lookDelayMs(ranForMs, this.intervalMs);
      let cancelTimer = (): void => undefined;
      const wake = (): void => {
        cancelTimer();
        resolve(outcome);
      };
      const ownRead = (): void => {
        this.ownReads += 1;
        if (!this.canRead()) {
          cancelTimer = this.scheduler.setTimeout(ownRead, waitMs);
          return;
        }
        const current = this.waiters.get(db);
        current?.delete(wake);
        if (current?.size === 0) this.waiters.delete(db);
        resolve(outcome);
      };
      let set = this.waiters.get(db);
      if (set === undefined) this.waiters.set(db, (set = new Set()));
      set.add(wake);
      cancelTimer = this.scheduler.setTimeout(ownRead, waitMs);
    });
  }
}
