/**
 * Compaction and cleanup jobs that take time on the injected scheduler.
 *
 * A compaction copies the live data (`startup + entries x cost + live /
 * throughput` ms, storage-model.ts), then,
 * like couch_db_compactor, runs catch-up passes for whatever was written
 * meanwhile (each as long as copying those bytes) before swapping the files.
 * Suspending stops the clock of the current pass; cancelling drops the
 * compacted copy and leaves the original file untouched.
 */
import type { JobHandle, JobOutcome } from "../../ports/store.js";
import type { CancelTimer, Scheduler } from "../../ports/shell.js";
import type { StorageModel } from "./storage-model.js";
import { copyDurationMs, type CompactionCost } from "./storage-model.js";

/** What a job works on: the db file, a view index file, or the db's index directory (cleanup). */
export interface JobTarget {
  /** Duration of the first pass, ms. */
  readonly initialDurationMs: number;
  /** What copying costs this job's compactor: its catch-up passes copy at that rate. */
  readonly cost: CompactionCost;
  /** A monotonic count of bytes appended to the source; 0-valued for cleanup. */
  appendedBytesTotal(): number;
  /** Swap in the result; returns bytes reclaimed. */
  finish(): number;
}

export type JobPhase = "copying" | "catching-up" | "suspended";

/** One line of `activeTasks()`, after CouchDB's `_active_tasks`. */
export interface JobStatus {
  readonly key: string;
  readonly kind: "db" | "view" | "cleanup";
  readonly db: string;
  readonly ddoc?: string | undefined;
  readonly phase: JobPhase;
  readonly startedAtMs: number;
  /** 0..100 of the current pass. */
  readonly progress: number;
  readonly catchUpPasses: number;
}

export interface JobDescription {
  readonly key: string;
  readonly kind: "db" | "view" | "cleanup";
  readonly db: string;
  readonly ddoc?: string | undefined;
}

export interface JobHooks {
  /** A fault injected for this job, checked just before the swap: fail with this reason. */
  takeFault(): string | undefined;
  /** The job ended (any outcome): forget it. */
  ended(job: CompactionJob): void;
}

export class CompactionJob {
  readonly description: JobDescription;
  readonly startedAtMs: number;
  readonly handle: JobHandle;
  private readonly scheduler: Scheduler;
  private readonly model: StorageModel;
  private readonly target: JobTarget;
  private readonly hooks: JobHooks;
  private settle!: (outcome: JobOutcome) => void;
  private finished = false;
  private suspended = false;
  private cancelTimer: CancelTimer | undefined;
  /** The current pass: how long it takes in total, how much is done, when the clock last resumed. */
  private passDurationMs: number;
  private passDoneMs = 0;
  private runningSinceMs: number;
  private appendedAtPassStart: number;
  private catchUpPasses = 0;

  constructor(scheduler: Scheduler, model: StorageModel, description: JobDescription, target: JobTarget, hooks: JobHooks) {
    this.scheduler = scheduler;
    this.model = model;
    this.description = description;
    this.target = target;
    this.hooks = hooks;
    this.startedAtMs = scheduler.nowMs();
    this.runningSinceMs = this.startedAtMs;
    this.passDurationMs = Math.max(0, target.initialDurationMs);
    this.appendedAtPassStart = target.appendedBytesTotal();
    const done = new Promise<JobOutcome>((resolve) => {
      this.settle = resolve;
    });
    this.handle = {
      done,
      suspend: async () => this.suspend(),
      resume: async () => this.resume(),
      cancel: async () => this.fail("cancelled"),
    };
    this.arm();
  }

  get isFinished(): boolean {
    return this.finished;
  }

  status(): JobStatus {
    const doneMs = this.passDoneMs + (this.suspended ? 0 : this.scheduler.nowMs() - this.runningSinceMs);
    const progress = this.passDurationMs <= 0 ? 100 : Math.min(100, Math.floor((100 * doneMs) / this.passDurationMs));
    return {
      ...this.description,
      phase: this.suspended ? "suspended" : this.catchUpPasses > 0 ? "catching-up" : "copying",
      startedAtMs: this.startedAtMs,
      progress,
      catchUpPasses: this.catchUpPasses,
    };
  }

  suspend(): void {
    if (this.finished || this.suspended) return;
    this.suspended = true;
    this.passDoneMs += this.scheduler.nowMs() - this.runningSinceMs;
    this.disarm();
  }

  resume(): void {
    if (this.finished || !this.suspended) return;
    this.suspended = false;
    this.runningSinceMs = this.scheduler.nowMs();
    this.arm();
  }

  /** End without swapping: the original file stays as it was. */
  fail(reason: string): void {
    if (this.finished) return;
    this.disarm();
    this.end({ ok: false, reason });
  }

  private arm(): void {
    const remainingMs = Math.max(0, this.passDurationMs - this.passDoneMs);
    this.cancelTimer = this.scheduler.setTimeout(() => this.passEnded(), remainingMs);
  }

  private disarm(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  private passEnded(): void {
    this.cancelTimer = undefined;
    if (this.finished || this.suspended) return;
    const appendedMeanwhile = this.target.appendedBytesTotal() - this.appendedAtPassStart;
    if (appendedMeanwhile > 0 && this.catchUpPasses < this.model.maxCatchUpPasses) {
      this.catchUpPasses++;
      this.appendedAtPassStart = this.target.appendedBytesTotal();
      this.passDurationMs = copyDurationMs(this.target.cost, appendedMeanwhile);
      this.passDoneMs = 0;
      this.runningSinceMs = this.scheduler.nowMs();
      this.arm();
      return;
    }
    const fault = this.hooks.takeFault();
    if (fault !== undefined) {
      this.end({ ok: false, reason: fault });
      return;
    }
    const reclaimedBytes = this.target.finish();
    this.end({ ok: true, reclaimedBytes });
  }

  private end(outcome: JobOutcome): void {
    this.finished = true;
    this.hooks.ended(this);
    this.settle(outcome);
  }
}

/** A handle to a job that is not running: it already ended well (nothing to watch). */
export function finishedHandle(): JobHandle {
  const done = Promise.resolve<JobOutcome>({ ok: true });
  return { done, suspend: async () => {}, resume: async () => {}, cancel: async () => {} };
}
