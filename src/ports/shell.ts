/**
 * What the shell (the runtime) needs from the world besides the store:
 * a clock, timers, somewhere to persist state, and a logger. The runtime runs
 * the same code on real time and on a virtual clock (simulations, tests).
 */

export interface Clock {
  /** Milliseconds since the epoch (virtual clocks may start anywhere). */
  nowMs(): number;
}

export type CancelTimer = () => void;

export interface Timers {
  /** Call `fn` once `delayMs` has passed on this timer's clock. */
  setTimeout(fn: () => void, delayMs: number): CancelTimer;
}

/** Clock and timers that agree with each other. */
export interface Scheduler extends Clock, Timers {}

/**
 * Small named JSON blobs that survive restarts: smoosh queues, feed seqs,
 * compacted seqs. `load` resolves `undefined` when nothing was saved.
 * Values are decoded by their owners (never trusted).
 */
export interface StatePort {
  load(key: string): Promise<unknown>;
  save(key: string, value: unknown): Promise<void>;
}

/** The levels a logger can be set to (pino's). */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** pino-compatible subset: structured fields first, message second. */
export interface Logger {
  debug(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
  child?(bindings: object): Logger;
}
