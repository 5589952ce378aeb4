/**
 * How a host-side sandbox reaches its guest: in a worker thread (the
 * default) or in this thread.
 */
import type { IndexFunctionSource, SandboxLimits } from "../../ports/sandbox.js";

export interface SandboxTransport {
  /** A new guest; `refused` maps function index -> compile error. */
  create(functions: readonly IndexFunctionSource[], limits: SandboxLimits): Promise<{ readonly handle: number; readonly refused: ReadonlyMap<number, string> }>;
  /** The batch's output chunks. Rejects when the guest's thread or instance failed (a WorkerFailure or an Error). */
  run(handle: number, text: string, count: number, limits: SandboxLimits, batchDeadlineMs: number): Promise<readonly string[]>;
  drop(handle: number): void;
}

/** Beyond a batch's own deadline: how long a silent thread is given before it is presumed stuck. */
export const DEFAULT_WATCHDOG_GRACE_MS = 10_000;

export const refusedFrom = (entries: readonly (readonly [number, string])[] | undefined): ReadonlyMap<number, string> => new Map(entries ?? []);
