/**
 * The latest db info the adapter has read for each db, with when: other
 * parts of the adapter (the design doc checks) use an info someone already
 * paid a request for instead of asking again. Bounded: the least recently
 * noted db is forgotten first.
 */
import type { DbInfo } from "../../ports/store.js";
import type { Timers } from "../../ports/shell.js";

export interface RecentInfo {
  readonly info: DbInfo;
  readonly atMs: number;
  /** Whether the server said `compact_running` (CouchDB does, PouchDB Server does not). */
  readonly reportsRunning: boolean;
}

export class RecentInfos {
  private readonly infos = new Map<string, RecentInfo>();
  /** Who waits for the next info of a db (compaction watchers): told once, then forgotten. */
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly maxDbs: number) {}

  note(info: DbInfo, atMs: number, reportsRunning: boolean): void {
    this.infos.delete(info.db);
    this.infos.set(info.db, { info, atMs, reportsRunning });
    if (this.infos.size > this.maxDbs) {
      const oldest = this.infos.keys().next();
      if (oldest.done !== true) this.infos.delete(oldest.value);
    }
    const waiting = this.waiters.get(info.db);
    if (waiting !== undefined) {
      this.waiters.delete(info.db);
      for (const wake of waiting) wake();
    }
  }

  /**
   * Resolves when the next info of `db` is noted, or after `maxWaitMs`,
   * whichever comes first; the listener and the timer are both removed then.
   */
  nextOf(db: string, maxWaitMs: number, timers: Timers): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        cancelTimer(); // assigned below: neither a note nor a timer can call this before
        this.waiters.get(db)?.delete(wake);
        if (this.waiters.get(db)?.size === 0) this.waiters.delete(db);
        resolve();
      };
      let set = this.waiters.get(db);
      if (set === undefined) this.waiters.set(db, (set = new Set()));
      set.add(wake);
      const cancelTimer = timers.setTimeout(wake, maxWaitMs);
    });
  }

  /** Dbs someone waits on (for tests: nothing may be left behind). */
  waitingCount(): number {
    let n = 0;
    for (const set of this.waiters.values()) n += set.size;
    return n;
  }

  /** The info of `db` read at or after `sinceMs`, if any. */
  since(db: string, sinceMs: number): DbInfo | undefined {
    return this.entrySince(db, sinceMs)?.info;
  }

  entrySince(db: string, sinceMs: number): RecentInfo | undefined {
    const entry = this.infos.get(db);
    return entry !== undefined && entry.atMs >= sinceMs ? entry : undefined;
  }
}
