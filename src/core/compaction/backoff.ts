/**
 * Retry delays after a failed compaction: exponential, capped, finite.
 * CouchDB retried a dying compaction every 5 s (2 s in later versions) forever
 * (#3571); here attempt n waits `initial * 2^(n-1)` seconds, at most `max`,
 * and gives up after `maxAttempts` (0 = never give up).
 */
import { cappedExponentialMs } from "../shared/backoff.js";

export interface BackoffConfig {
  readonly retryInitialSecs: number;
  readonly retryMaxSecs: number;
  readonly retryMaxAttempts: number;
}

/** Delay before retry number `attempt` (1-based). */
export const backoffDelayMs = (config: BackoffConfig, attempt: number): number =>
  cappedExponentialMs(config.retryInitialSecs * 1000, config.retryMaxSecs * 1000, attempt - 1);

/** Whether failure number `attempt` exhausts the allowed retries. */
export const shouldGiveUp = (config: BackoffConfig, attempt: number): boolean =>
  config.retryMaxAttempts > 0 && attempt > config.retryMaxAttempts;
