/**
 * The least any compaction policy can pay, in requests, to hold files near
 * their live data under a churn. bench:churn prints it beside each row, so
 * that a pair of targets (mean file/active, requests per db update) is seen
 * to be reachable or not at a setting before a policy is tuned towards it
 * (docs/benchmarks.md, "A floor under every policy").
 *
 * Why it holds. A db gathers garbage (file bytes over its live data) as it
 * is written, g bytes an update, and a compaction takes it back to none.
 * Compactions of db i right after some of its U_i updates (later only adds
 * garbage) cut them into K_i + 1 runs; a run of m updates, evenly spaced,
 * holds 0, g, ..., (m - 1) g for a spacing each. That is convex in m, so
 * equal runs hold least: on average g (U_i / (K_i + 1) - 1) / 2. Spread
 * K compactions over the n dbs as well as they can be (Cauchy-Schwarz)
 * and divide by the live data, a a db:
 *
 *   mean file/active - 1 >= (g / a) x (evenness x U / (2 (K + n)) - 1/2)
 *
 * where evenness = (sum_i sqrt(U_i / U))^2 / n is 1 when every db takes the
 * same share of the U updates. So holding a file/active target takes at
 * least some number of compactions, whoever chooses them. Each costs at
 * least its start and, on a store that announces no end (CouchDB), its
 * share of the read that sees the end: 1 + 1/c requests with at most c at
 * once. A real compaction takes time while the db keeps growing and leaves
 * some garbage, so real rows sit above the floor; it assumes only that the
 * policy cannot foresee when each db will next be written.
 */

/** What a churn gives the bound: all of it measured, none of it chosen by the policy. */
export interface ChurnShape {
  /** File bytes a db update adds beyond its live data's own growth (garbage per update). */
  readonly garbageBytesPerUpdate: number;
  /** Live data per db, the mean over the churn. */
  readonly activeBytesPerDb: number;
  /** How evenly the updates fall on the dbs (`evenness`): 1 for all alike. */
  readonly evenness: number;
}

/**
 * The fewest requests a compaction can cost: its start, plus (when nothing
 * announces its end) a read that sees at most `concurrency` ends.
 */
export const leastRequestsPerCompaction = (concurrency: number, endsAnnounced: boolean): number =>
  endsAnnounced ? 1 : 1 + 1 / Math.max(1, concurrency);

/** (sum_i sqrt(U_i / U))^2 / n: 1 when every db takes the same share of `updatesPerDb`, less when some take more. */
export const evenness = (updatesPerDb: readonly number[]): number => {
  const total = updatesPerDb.reduce((a, b) => a + Math.max(0, b), 0);
  if (updatesPerDb.length === 0 || total <= 0) return 1;
  const sumOfRoots = updatesPerDb.reduce((sum, u) => sum + Math.sqrt(Math.max(0, u) / total), 0);
  return (sumOfRoots * sumOfRoots) / updatesPerDb.length;
};

/** g / a: the garbage an update adds, relative to what a db holds live. */
const garbagePerLive = (shape: ChurnShape): number => shape.garbageBytesPerUpdate / Math.max(1, shape.activeBytesPerDb);

/**
 * The least mean file/active - 1 that `compactions` compactions can hold
 * over `updates` updates of `dbs` dbs, starting with no garbage (the
 * header's inequality).
 */
export const leastGarbageRatio = (shape: ChurnShape, updates: number, compactions: number, dbs: number): number =>
  Math.max(0, garbagePerLive(shape) * ((shape.evenness * updates) / (2 * (Math.max(0, compactions) + Math.max(1, dbs))) - 0.5));

/** The fewest compactions that can hold mean file/active at or below `fileToActive` over `updates` updates of `dbs` dbs. */
export const fewestCompactionsFor = (shape: ChurnShape, updates: number, dbs: number, fileToActive: number): number => {
  const perLive = garbagePerLive(shape);
  if (perLive <= 0 || updates <= 0) return 0;
  // (g/a) (e U / (2 (K + n)) - 1/2) <= R - 1  <=>  K + n >= e U / (2 ((R - 1) / (g/a) + 1/2))
  const needed = (shape.evenness * updates) / (2 * (Math.max(0, fileToActive - 1) / perLive + 0.5)) - Math.max(1, dbs);
  return Math.max(0, Math.ceil(needed - 1e-9));
};

/**
 * The fewest compactions at once at which `compactions` compactions over
 * `updates` updates can cost at most `requestsPerUpdate` on a store that
 * announces no end; undefined when even an announced end would not (the
 * starts alone cost more).
 */
export const leastConcurrencyFor = (compactions: number, updates: number, requestsPerUpdate: number): number | undefined => {
  if (compactions === 0) return 1;
  const allowedPerCompaction = (requestsPerUpdate * updates) / compactions;
  // 1 + 1/c <= allowed  <=>  c >= 1 / (allowed - 1)
  if (allowedPerCompaction <= 1) return undefined;
  return Math.max(1, Math.ceil(1 / (allowedPerCompaction - 1) - 1e-9));
};
