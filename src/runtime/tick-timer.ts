/**
 * The one timer a core asks for (`schedule-tick`): only the latest request
 * counts. The core is told `tick` when it fires, and it must treat a tick as
 * "the shell holds no timer now" (see each core's `tick` handling): a timer
 * may fire early or late by the clock's reading, and a core that waited for
 * a different wake-up time before asking again would stall.
 */
import type { Scheduler } from "../ports/shell.js";

export interface TickTimer {
  /** Wake at `atMs` (replacing any earlier request); a non-finite time cancels. */
  schedule(atMs: number): void;
  cancel(): void;
  /** The time of the pending timer, if one is armed. */
  armedAtMs(): number | undefined;
}

export function createTickTimer(scheduler: Scheduler, onTick: () => void): TickTimer {
  let armed: { readonly atMs: number; readonly cancel: () => void } | undefined;
  const cancel = (): void => {
    armed?.cancel();
    armed = undefined;
  };
  return {
    schedule(atMs) {
      if (armed?.atMs === atMs) return;
      cancel();
      if (!Number.isFinite(atMs)) return;
      const timer = {
        atMs,
        cancel: scheduler.setTimeout(
          () => {
            if (armed === timer) armed = undefined;
            onTick();
          },
          Math.max(0, atMs - scheduler.nowMs()),
        ),
      };
      armed = timer;
    },
    cancel,
    armedAtMs: () => armed?.atMs,
  };
}
