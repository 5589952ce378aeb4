/**
 * The latest db info the adapter has read for each db, with when: other
 * parts of the adapter (the design doc checks) use an info someone already
 * paid a request for instead of asking again. Bounded: the least recently
 * noted db is forgotten first.
 */
import type { DbInfo } from "../../ports/store.js";

export interface RecentInfo {
  readonly info: DbInfo;
  readonly atMs: number;
  /** Whether the server said `compact_running` (CouchDB does, PouchDB Server does not). */
  readonly reportsRunning: boolean;
}

export class RecentInfos {
  private readonly infos = new Map<string, RecentInfo>();

  constructor(private readonly maxDbs: number) {}

  note(info: DbInfo, atMs: number, reportsRunning: boolean): void {
    this.infos.delete(info.db);
    this.infos.set(info.db, { info, atMs, reportsRunning });
    if (this.infos.size > this.maxDbs) {
      const oldest = this.infos.keys().next();
      if (oldest.done !== true) this.infos.delete(oldest.value);
    }
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
