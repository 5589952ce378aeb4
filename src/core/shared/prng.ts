/**
 * A tiny seeded PRNG (mulberry32), pure: the state is a 32-bit integer passed
 * in and returned, so the core and simulations stay replayable. Not for
 * anything security-related.
 */

/** The generator's whole state: an unsigned 32-bit integer. */
export type PrngState = number;

/** A state from any number (the integer part, folded to 32 bits). */
export const seedPrng = (seed: number): PrngState => (Number.isFinite(seed) ? Math.trunc(seed) >>> 0 : 0);

/** The next unsigned 32-bit value and the state after it. */
export function nextUint32(state: PrngState): readonly [number, PrngState] {
  const nextState = (state + 0x6d2b79f5) >>> 0;
  let z = nextState;
  z = Math.imul(z ^ (z >>> 15), z | 1);
  z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
  return [(z ^ (z >>> 14)) >>> 0, nextState];
}

/** A float in [0, 1) and the state after it. */
export function nextFloat(state: PrngState): readonly [number, PrngState] {
  const [value, nextState] = nextUint32(state);
  return [value / 4_294_967_296, nextState];
}

/** An integer in [0, bound) (bound >= 1) and the state after it. */
export function nextInt(state: PrngState, bound: number): readonly [number, PrngState] {
  const [value, nextState] = nextFloat(state);
  return [Math.floor(value * Math.max(1, Math.floor(bound))), nextState];
}
