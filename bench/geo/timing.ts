/** Latency samples and their percentiles, for bench:geo's in-process, HTTP and PostGIS timings. */
import { quantile } from "../quantile.js";

export interface Latency {
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanHits: number;
}

/** Sorts the samples in place. */
export function percentiles(samplesUs: number[], hits: number): Latency {
  samplesUs.sort((a, b) => a - b);
  return { p50Us: quantile(samplesUs, 0.5), p99Us: quantile(samplesUs, 0.99), meanHits: hits / samplesUs.length };
}

export const nowUs = (): number => Number(process.hrtime.bigint()) / 1000;
