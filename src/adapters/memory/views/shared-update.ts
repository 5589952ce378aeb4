/**
 * One update at a time per index (CouchDB issue 5710: concurrent queries and
 * the background indexer each started a build of the same index). Callers
 * ask for "everything up to seq S":
 *
 * - nothing running: a pass starts, and reads up to the db's seq of then;
 * - a pass running whose target covers S: the caller joins it;
 * - a pass running that started before S was written: the caller joins the
 *   one follow-up pass, which starts when the running one ends and reads up
 *   to the db's seq of then. However many callers come, there is at most one
 *   pass running and one waiting: a write landing during a pass is never
 *   lost, and a stream of writes never starts a pile of builds.
 */

export type UpdatePass = () => Promise<number>;

interface Pass {
  readonly targetSeq: number;
  readonly done: Promise<number>;
}

export class SharedUpdate {
  private running: Pass | undefined;
  private followUp: { readonly done: Promise<number> } | undefined;
  private waiting = 0;

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /** Callers waiting for a pass (CouchDB's `waiting_clients`). */
  get waitingClients(): number {
    return this.waiting;
  }

  /**
   * Resolves with the seq the index reached once it covers `targetSeq` (the
   * db's seq now). `start(target)` runs one pass up to the db's seq at the
   * time it starts, given as `target`.
   */
  request(targetSeq: number, currentSeq: () => number, start: (targetSeq: number) => Promise<number>): Promise<number> {
    const running = this.running;
    const joined =
      running === undefined
        ? this.begin(currentSeq(), start)
        : running.targetSeq >= targetSeq
          ? running.done
          : this.queueFollowUp(running, currentSeq, start);
    this.waiting++;
    const leave = (): void => {
      this.waiting--;
    };
    joined.then(leave, leave);
    return joined;
  }

  private begin(targetSeq: number, start: (targetSeq: number) => Promise<number>): Promise<number> {
    const done = start(targetSeq);
    const pass: Pass = { targetSeq, done };
    this.running = pass;
    const end = (): void => {
      if (this.running === pass) this.running = undefined;
    };
    done.then(end, end);
    return done;
  }

  private queueFollowUp(running: Pass, currentSeq: () => number, start: (targetSeq: number) => Promise<number>): Promise<number> {
    if (this.followUp !== undefined) return this.followUp.done;
    const after = running.done.then(
      () => undefined,
      () => undefined,
    );
    const done = after.then(() => {
      this.followUp = undefined;
      return this.begin(currentSeq(), start);
    });
    this.followUp = { done };
    return done;
  }
}
