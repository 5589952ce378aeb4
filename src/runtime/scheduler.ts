/**
 * Schedulers: a clock and timers that agree with each other.
 *
 * `realScheduler()` is wall time (Date.now + setTimeout). `VirtualScheduler`
 * is a deterministic clock for tests, simulations and benchmarks: time moves
 * only when told to, and due timers fire in time order (FIFO among equal times).
 */
import type { CancelTimer, Scheduler } from "../ports/shell.js";

export interface RealSchedulerOptions {
  /**
   * Unref'd timers do not keep the process alive. Default false: the daemon's
   * timers are what keep it running; embedders may prefer true.
   */
  readonly unref?: boolean;
}

/**
 * Wall-clock time and Node timers, agreeing with each other: Node's timers
 * run on a coarse monotonic clock and fire up to 1 ms before `Date.now()`
 * reaches their time (measured: 1 timer in 10), so an early one is re-armed
 * for the rest, and `fn` never runs before `nowMs()` reaches the due time.
 */
export function realScheduler(options: RealSchedulerOptions = {}): Scheduler {
  return {
    nowMs: () => Date.now(),
    setTimeout(fn, delayMs) {
      const clampedMs = clampDelayMs(delayMs);
      const dueMs = Date.now() + clampedMs;
      let handle: NodeJS.Timeout;
      const arm = (waitMs: number): void => {
        handle = setTimeout(() => {
          const earlyByMs = dueMs - Date.now();
          if (earlyByMs > 0 && clampedMs < MAX_NODE_DELAY_MS) arm(earlyByMs);
          else fn();
        }, waitMs);
        if (options.unref === true) handle.unref();
      };
      arm(clampedMs);
      return () => clearTimeout(handle);
    },
  };
}

/** Node's setTimeout overflows to 1 ms past 2^31-1; NaN and negatives mean "now". */
function clampDelayMs(delayMs: number): number {
  if (!Number.isFinite(delayMs) || delayMs < 0) return delayMs === Infinity ? MAX_NODE_DELAY_MS : 0;
  return Math.min(delayMs, MAX_NODE_DELAY_MS);
}
const MAX_NODE_DELAY_MS = 2_147_483_647;

interface VirtualTimer {
  readonly atMs: number;
  /** Insertion order: the FIFO tie-breaker among timers due at the same time. */
  readonly order: number;
  readonly fn: () => void;
}

/**
 * Timers that do not fire exactly on time, as on a busy machine: each fires
 * up to `maxLateMs` late, or up to `maxEarlyMs` early (never more than half
 * its delay, so it still fires after it was set), drawn from `random`.
 * Simulations use it to show bugs that assume punctual timers.
 */
export interface TimerJitter {
  /** Uniform in [0, 1): pass a seeded source for replayable runs. */
  readonly random: () => number;
  readonly maxLateMs: number;
  readonly maxEarlyMs: number;
}

export interface VirtualSchedulerOptions {
  /** Where the clock starts (ms since the epoch; any number). Default 0. */
  readonly startMs?: number;
  /** Bound on pending timers: a runaway loop fails loudly instead of eating memory. Default 1,000,000. */
  readonly maxPendingTimers?: number;
  /** Default: every timer fires exactly on time. */
  readonly jitter?: TimerJitter;
}

/** Lets promise chains started by a timer callback run to their next await on a real timer/IO. */
const settleMicrotasks = async (rounds: number): Promise<void> => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/**
 * A deterministic clock. Nothing happens until `advanceBy`/`advanceTo`/
 * `runUntilIdle` (or their async variants) is called.
 *
 * Sync vs async: `advanceBy` fires timers back to back, so promise callbacks
 * queued by a timer run only after the whole advance. When the code under test
 * is async (the runtime awaits store calls, then schedules the next timer),
 * use `advanceByAsync`/`advanceToAsync`/`runUntilIdleAsync`: they let the
 * event loop drain (a few `setImmediate` turns) before the first timer, after
 * each firing and at the end, so a timer scheduled from inside a `.then` is
 * seen (and fired, if due) in the same advance.
 */
export class VirtualScheduler implements Scheduler {
  private currentMs: number;
  private nextOrder = 0;
  /** Kept sorted by (atMs, order); inserts binary-search their place. */
  private readonly timers: VirtualTimer[] = [];
  private readonly maxPendingTimers: number;
  private readonly jitter: TimerJitter | undefined;

  constructor(options: VirtualSchedulerOptions = {}) {
    this.currentMs = options.startMs ?? 0;
    this.maxPendingTimers = options.maxPendingTimers ?? 1_000_000;
    this.jitter = options.jitter;
  }

  nowMs(): number {
    return this.currentMs;
  }

  setTimeout(fn: () => void, delayMs: number): CancelTimer {
    if (this.timers.length >= this.maxPendingTimers) {
      throw new Error(`VirtualScheduler: more than ${this.maxPendingTimers} pending timers`);
    }
    const safeDelayMs = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : delayMs === Infinity ? Infinity : 0;
    const timer: VirtualTimer = { atMs: this.currentMs + this.jittered(safeDelayMs), order: this.nextOrder++, fn };
    this.timers.splice(this.insertionIndex(timer), 0, timer);
    return () => {
      const index = this.timers.indexOf(timer);
      if (index >= 0) this.timers.splice(index, 1);
    };
  }

  /** The delay after jitter: late by up to maxLateMs, or early by up to maxEarlyMs but at most half the delay (whole ms). */
  private jittered(delayMs: number): number {
    const jitter = this.jitter;
    if (jitter === undefined || delayMs === Infinity) return delayMs;
    const early = jitter.random() < 0.5;
    const amount = jitter.random();
    if (early) return delayMs - Math.floor(amount * Math.min(jitter.maxEarlyMs, delayMs / 2));
    return delayMs + Math.floor(amount * jitter.maxLateMs);
  }

  /** How many timers wait to fire. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** When the earliest pending timer is due, or `undefined` when none is pending. */
  nextTimerAtMs(): number | undefined {
    return this.timers[0]?.atMs;
  }

  /** Move the clock forward by `ms`, firing every timer due by then (including ones scheduled while firing). */
  advanceBy(ms: number): number {
    return this.advanceTo(this.currentMs + Math.max(0, ms));
  }

  /** Move the clock to `targetMs` (never backwards), firing due timers in order. Returns how many fired. */
  advanceTo(targetMs: number): number {
    let fired = 0;
    while (this.fireNextDue(targetMs)) fired++;
    if (targetMs > this.currentMs) this.currentMs = targetMs;
    return fired;
  }

  /**
   * Fire timers in order, jumping the clock to each, until none is pending or
   * `maxSteps` fired (a guard against timers that always re-arm). Returns how many fired.
   */
  runUntilIdle(maxSteps = 10_000): number {
    let fired = 0;
    while (fired < maxSteps && this.fireNextDue(Infinity)) fired++;
    return fired;
  }

  /** `advanceBy` for async code: drains the event loop around each timer firing. */
  async advanceByAsync(ms: number, settleRounds = 5): Promise<number> {
    return this.advanceToAsync(this.currentMs + Math.max(0, ms), settleRounds);
  }

  /** `advanceTo` for async code: drains the event loop around each timer firing. */
  async advanceToAsync(targetMs: number, settleRounds = 5): Promise<number> {
    let fired = 0;
    await settleMicrotasks(settleRounds);
    while (this.fireNextDue(targetMs)) {
      fired++;
      await settleMicrotasks(settleRounds);
    }
    if (targetMs > this.currentMs) this.currentMs = targetMs;
    await settleMicrotasks(settleRounds);
    return fired;
  }

  /** `runUntilIdle` for async code. */
  async runUntilIdleAsync(maxSteps = 10_000, settleRounds = 5): Promise<number> {
    let fired = 0;
    await settleMicrotasks(settleRounds);
    while (fired < maxSteps && this.fireNextDue(Infinity)) {
      fired++;
      await settleMicrotasks(settleRounds);
    }
    return fired;
  }

  /** Fire the earliest timer if it is due by `limitMs`; the clock jumps to its time. */
  private fireNextDue(limitMs: number): boolean {
    const next = this.timers[0];
    if (next === undefined || next.atMs > limitMs || next.atMs === Infinity) return false;
    this.timers.shift();
    if (next.atMs > this.currentMs) this.currentMs = next.atMs;
    next.fn();
    return true;
  }

  private insertionIndex(timer: VirtualTimer): number {
    // Upper bound on atMs: equal times go after existing ones (FIFO), as order only grows.
    let low = 0;
    let high = this.timers.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const other = this.timers[mid];
      if (other !== undefined && other.atMs <= timer.atMs) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
