/**
 * Effect handlers in flight. Every handler catches its own failures; this is
 * the last guard so a bug in one never becomes an unhandled rejection, and
 * `whenIdle` lets tests, simulations and `stop()` wait for them all.
 */
import { errorText } from "../core/shared/error-text.js";
import type { Logger } from "../ports/shell.js";

export interface InFlight {
  track(work: Promise<unknown>): void;
  /** Resolves once nothing tracked is pending (including work started meanwhile). */
  whenIdle(): Promise<void>;
  size(): number;
}

export function createInFlight(logger: Logger, what: string): InFlight {
  const pending = new Set<Promise<void>>();
  return {
    track(work) {
      const tracked = work.then(
        () => undefined,
        (error: unknown) => logger.error({ err: errorText(error) }, `${what} effect handler failed`),
      );
      pending.add(tracked);
      void tracked.finally(() => pending.delete(tracked));
    },
    async whenIdle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    size: () => pending.size,
  };
}
