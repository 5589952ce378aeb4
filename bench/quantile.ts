/** The q-quantile (0..1) of ascending `sorted`, nearest rank below; NaN when empty. Shared by the benches' latency and size figures. */
export const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
