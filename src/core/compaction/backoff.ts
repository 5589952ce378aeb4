/**
 * Retry delays after a failed compaction: exponential, capped, finite.
 * CouchDB retried a dying compaction every 5 s (2 s in later versions) forever
 * (#3571); here attempt n waits `initial * 2^(n-1)` seconds, at most `max`,
 * and gives up after `maxAttempts` (0 = never give up).
 */

export interface BackoffConfig {
  readonly retryInitialSecs: number;
  readonly retryMaxSecs: number;
  readonly retryMaxAttempts: number;
}

/** Delay before retry number `attempt` (1-based). */
export const backoffDelayMs = (config: BackoffConfig, attempt: number): number => {
  const exponent = Math.max(0, attempt - 1);
  // 2^60 seconds already dwarfs any cap; avoids Infinity arithmetic for huge attempts.
  const secs = Math.min(config.retryMaxSecs, config.retryInitialSecs * 2 ** Math.min(exponent, 60));
  return secs * 1000;
};

/** Whether failure number `attempt` exhausts the allowed retries. */
export const shouldGiveUp = (config: BackoffConfig, attempt: number): boolean =>
  config.retryMaxAttempts > 0 && attempt > config.retryMaxAttempts;
