/** Waiting between polls on the injected scheduler, cut short by an abort. */
import type { Scheduler } from "../../../ports/shell.js";

export class BuildAbortedError extends Error {
  override readonly name = "AbortError";
  constructor() {
    super("the build is no longer wanted");
  }
}

export const pause = (scheduler: Scheduler, delayMs: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new BuildAbortedError());
    const onAbort = (): void => {
      cancel();
      reject(new BuildAbortedError());
    };
    const cancel = scheduler.setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, delayMs);
    signal.addEventListener("abort", onAbort, { once: true });
  });

/** Poll intervals: start small (a short build is seen at once), double up to `maxMs` (a long one costs few requests). */
export const nextPollMs = (currentMs: number, maxMs: number): number => Math.min(maxMs, currentMs * 2);
