/**
 * The global limit on check requests (`[smoosh] check_requests_per_sec`):
 * a token bucket over the explicit clock. One token is one request to the
 * store: one object's info, or up to `dbsPerInfoRequest` dbs' infos in one
 * `POST /_dbs_info`. The bucket holds at most one second's worth (and at
 * least one token), so a quiet spell does not turn into a burst.
 */
export interface CheckBudget {
  readonly tokens: number;
  readonly atMs: number;
}

export { DEFAULT_DBS_PER_INFO_REQUEST } from "../shared/dbs-info.js";

export const fullBudget = (ratePerSec: number, nowMs: number): CheckBudget => ({ tokens: capacityOf(ratePerSec), atMs: nowMs });

const capacityOf = (ratePerSec: number): number => Math.max(1, ratePerSec);

/** Tokens earned since the last look, up to the capacity. Time never runs backwards here. */
export const refill = (budget: CheckBudget, ratePerSec: number, nowMs: number): CheckBudget => {
  if (nowMs <= budget.atMs) return budget;
  const tokens = Math.min(capacityOf(ratePerSec), budget.tokens + ((nowMs - budget.atMs) * ratePerSec) / 1000);
  return { tokens, atMs: nowMs };
};

/** Refills are sums of fractions: a token a rounding error short is a token. */
const WHOLE = 1 - 1e-9;

export const canSpend = (budget: CheckBudget): boolean => budget.tokens >= WHOLE;

export const spend = (budget: CheckBudget): CheckBudget => ({ tokens: budget.tokens - 1, atMs: budget.atMs });

/** When the next whole token will be there (for the wake-up tick). */
export const nextTokenAtMs = (budget: CheckBudget, ratePerSec: number): number =>
  budget.tokens >= WHOLE ? budget.atMs : budget.atMs + Math.ceil(((1 - budget.tokens) * 1000) / ratePerSec);
