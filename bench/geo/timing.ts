/** Latency samples and their percentiles, for bench:geo's in-process, HTTP and PostGIS timings. */
export interface Latency {
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanHits: number;
}

/** Sorts the samples in place. */
export function percentiles(samplesUs: number[], hits: number): Latency {
  samplesUs.sort((a, b) => a - b);
  const at = (q: number): number => samplesUs[Math.min(samplesUs.length - 1, Math.floor(q * samplesUs.length))]!;
  return { p50Us: at(0.5), p99Us: at(0.99), meanHits: hits / samplesUs.length };
}

export const nowUs = (): number => Number(process.hrtime.bigint()) / 1000;
