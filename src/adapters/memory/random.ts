/**
 * A mutable convenience wrapper over the pure PRNG in `core/shared/prng.ts`,
 * for workload generators and simulations that draw many numbers in a row.
 */
import { nextFloat, nextInt, seedPrng, type PrngState } from "../../core/shared/prng.js";

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, bound). */
  int(bound: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** The current state (to resume a run later). */
  state(): PrngState;
}

export function createRandom(seed: number): Random {
  let current = seedPrng(seed);
  return {
    next() {
      const [value, nextState] = nextFloat(current);
      current = nextState;
      return value;
    },
    int(bound) {
      const [value, nextState] = nextInt(current, bound);
      current = nextState;
      return value;
    },
    chance(p) {
      return this.next() < p;
    },
    state: () => current,
  };
}
