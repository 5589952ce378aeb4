/**
 * Capped exponential back-off, the one formula every retry in upholster uses
 * (failed compactions, feed writes, HTTP requests): retry `attempt` (0-based)
 * waits `initialMs * 2^attempt`, at most `capMs`. The exponent is clamped so
 * huge attempt counts never reach Infinity arithmetic.
 */
export const cappedExponentialMs = (initialMs: number, capMs: number, attempt: number): number =>
  Math.min(capMs, initialMs * 2 ** Math.min(Math.max(0, attempt), 30));
