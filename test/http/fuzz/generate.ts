/**
 * The exchanges of a run. Each is drawn from its own seed (the run's seed
 * mixed with its index), so one exchange can be replayed alone from a failure
 * message (`FC_SEED=<seed> FUZZ_ONLY=<index>`), and the run's seed comes from
 * fast-check's global configuration (test/setup.ts, `FC_SEED`), as in the
 * property tests.
 */
import fc from "fast-check";
import type { FuzzExchange } from "./exchanges.js";
import { clientRequest, type Credentials } from "./client-requests.js";
import { rawExchange } from "./raw-exchanges.js";

export const runSeed = (): number => fc.readConfigureGlobal().seed ?? 0;

const basicOf = (admin: Credentials): string => `Basic ${Buffer.from(`${admin.name}:${admin.password}`).toString("base64")}`;

/** Three in five from a real client, two in five raw bytes. */
export const fuzzExchange = (admin: Credentials): fc.Arbitrary<FuzzExchange> =>
  fc.oneof({ weight: 3, arbitrary: clientRequest(admin) }, { weight: 2, arbitrary: rawExchange(basicOf(admin)) });

/** A 32-bit seed for one exchange: mixed, so runs with neighbouring seeds share no exchanges (`seed + index` would shift by one). */
const exchangeSeed = (seed: number, index: number): number => {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ index;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) | 0;
};

export const exchangeAt = (arbitrary: fc.Arbitrary<FuzzExchange>, seed: number, index: number): FuzzExchange =>
  fc.sample(arbitrary, { seed: exchangeSeed(seed, index), numRuns: 1 })[0]!;

/** `FUZZ_ONLY=3,17`: just those indices; otherwise `0 .. count-1`. */
export function indicesToSend(count: number, only: string | undefined): number[] {
  if (only !== undefined && only.trim() !== "") return only.split(",").map((part) => Number(part.trim()));
  return Array.from({ length: count }, (_, i) => i);
}
