/** The real-time Scheduler the adapter uses when none is injected. */
import type { Scheduler } from "../../ports/shell.js";

export const realScheduler: Scheduler = {
  nowMs: () => Date.now(),
  setTimeout: (fn, delayMs) => {
    const handle = setTimeout(fn, Math.max(0, delayMs));
    // Never keep the process alive just for a retry or a poll.
    handle.unref?.();
    return () => clearTimeout(handle);
  },
};

export const sleep = (scheduler: Scheduler, delayMs: number): Promise<void> =>
  new Promise((resolve) => {
    scheduler.setTimeout(resolve, delayMs);
  });
