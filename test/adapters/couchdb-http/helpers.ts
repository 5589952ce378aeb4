import type { Scheduler } from "../../../src/ports/shell.js";

/** A scheduler whose timers fire on the next turn, recording the delays asked for (back-off is checked, not waited). */
export const fastScheduler = (): Scheduler & { delays: number[] } => {
  const delays: number[] = [];
  return {
    delays,
    nowMs: () => Date.now(),
    setTimeout: (fn, delayMs) => {
      delays.push(delayMs);
      const h = setImmediate(fn);
      return () => clearImmediate(h);
    },
  };
};
