/**
 * Capped exponential back-off with "full jitter": the delay before retry
 * `attempt` (0-based) is uniform in [0, min(capMs, baseMs * 2^attempt)).
 * Full jitter spreads the retries of many clients that failed together.
 * Pure: randomness is a parameter.
 */
import { cappedExponentialMs } from "../../core/shared/backoff.js";

export interface BackoffPolicy {
  readonly baseMs: number;
  readonly capMs: number;
}

export const backoffCeilingMs = (attempt: number, policy: BackoffPolicy): number =>
  cappedExponentialMs(policy.baseMs, policy.capMs, attempt);

/** `random` returns a number in [0, 1). */
export const backoffDelayMs = (attempt: number, policy: BackoffPolicy, random: () => number): number => {
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 0.999999) : 0.5;
  return Math.floor(unit * backoffCeilingMs(attempt, policy));
};
