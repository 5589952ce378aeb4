/**
 * When the memory store builds a written db's views on its own: a fixed
 * delay after the write that made the db pending, one pass per db however
 * many writes came meanwhile.
 *
 * Dbs due at the same moment share one timer, which starts their passes in
 * the order they were written: a simulation's scheduler gives every timer
 * its own event-loop turn, and one timer per db cost bench:simulate about 7%
 * (docs/benchmarks.md, "One timer per moment for the store's view passes").
 */
import type { CancelTimer, Scheduler } from "../../ports/shell.js";
import type { DbName } from "../../ports/store.js";

export class AutoIndexTimers {
  /** Dbs waiting for their pass, by the time it is due (one entry per db: bounded by the dbs). */
  private readonly dueMsByDb = new Map<DbName, number>();
  /** One timer per due time (bounded by the distinct times within one delay). */
  private readonly batches = new Map<number, { readonly dbs: DbName[]; readonly cancel: CancelTimer }>();

  constructor(
    private readonly scheduler: Scheduler,
    private readonly delayMs: number,
    private readonly build: (db: DbName) => void,
  ) {}

  /** `db` was written: its pass is due after the delay, unless one is pending already. */
  schedule(db: DbName): void {
    if (this.dueMsByDb.has(db)) return;
    const dueMs = this.scheduler.nowMs() + this.delayMs;
    this.dueMsByDb.set(db, dueMs);
    const batch = this.batches.get(dueMs);
    if (batch !== undefined) {
      batch.dbs.push(db);
      return;
    }
    const dbs = [db];
    this.batches.set(dueMs, { dbs, cancel: this.scheduler.setTimeout(() => this.fire(dueMs, dbs), this.delayMs) });
  }

  /** `db` was deleted: no pass for it (a db created again under its name waits for its own time). */
  forget(db: DbName): void {
    this.dueMsByDb.delete(db);
  }

  close(): void {
    for (const batch of this.batches.values()) batch.cancel();
    this.batches.clear();
    this.dueMsByDb.clear();
  }

  private fire(dueMs: number, dbs: readonly DbName[]): void {
    this.batches.delete(dueMs);
    for (const db of dbs) {
      // Deleted (and maybe created again, due later) since: not this batch's.
      if (this.dueMsByDb.get(db) !== dueMs) continue;
      this.dueMsByDb.delete(db);
      this.build(db);
    }
  }
}
