/**
 * "Tell me when these keys are in the feed db": the reconciler records what
 * it learnt about a page only once the page's events are written, so its
 * knowledge never claims more than the feed says (a crash in between costs a
 * repeat, never a loss).
 *
 * A key counts as written by a write that STARTED after the wait began: a
 * write already in flight carries an older event of the same key. A key the
 * writer dropped (its pending bound) or a stop ends the wait with `false`.
 */

interface Waiter {
  readonly afterWrite: number;
  readonly remaining: Set<string>;
  readonly resolve: (written: boolean) => void;
}

/** The reconciler waits for one page at a time; a few more is a bug, refused rather than held. */
const MAX_WAITERS = 16;

export class WriteBarriers {
  private writes = 0;
  private readonly waiters = new Set<Waiter>();

  /** Number the next write (call when it starts, before any await). */
  writeStarted(): number {
    return ++this.writes;
  }

  /** `inFlight`: the keys of the write in flight now count when it succeeds (they are pending, not older). */
  wait(keys: readonly string[], inFlight = false): Promise<boolean> {
    if (keys.length === 0) return Promise.resolve(true);
    if (this.waiters.size >= MAX_WAITERS) return Promise.resolve(false);
    const afterWrite = inFlight ? this.writes - 1 : this.writes;
    return new Promise((resolve) => this.waiters.add({ afterWrite, remaining: new Set(keys), resolve }));
  }

  /** Write `writeId` stored these keys. */
  written(writeId: number, keys: readonly string[]): void {
    for (const waiter of [...this.waiters]) {
      if (writeId <= waiter.afterWrite) continue;
      for (const key of keys) waiter.remaining.delete(key);
      if (waiter.remaining.size === 0) this.finish(waiter, true);
    }
  }

  /** The writer refused these keys (bound reached): waits on them fail. */
  dropped(keys: readonly string[]): void {
    for (const waiter of [...this.waiters]) if (keys.some((k) => waiter.remaining.has(k))) this.finish(waiter, false);
  }

  cancelAll(): void {
    for (const waiter of [...this.waiters]) this.finish(waiter, false);
  }

  private finish(waiter: Waiter, written: boolean): void {
    this.waiters.delete(waiter);
    waiter.resolve(written);
  }
}
