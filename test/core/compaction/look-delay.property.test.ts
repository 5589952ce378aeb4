/**
 * The wait between reads of a running compaction (look-delay.ts): an
 * interval while it is young, a quarter of its running time later, at most
 * a minute. Pinned as a schedule: from a compaction's start, each read
 * waits what the rule says after the one before.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { LOOK_LATE_SHARE, lookDelayMs, MAX_LOOK_DELAY_MS } from "../../../src/core/compaction/look-delay.js";

/** The reads of a compaction that runs `durationMs`, from its start: each one wait after the last. */
const readsOver = (durationMs: number, intervalMs: number): number[] => {
  const reads: number[] = [];
  for (let at = lookDelayMs(0, intervalMs); ; at += lookDelayMs(at, intervalMs)) {
    reads.push(at);
    if (at >= durationMs) return reads;
  }
};

const intervalArb = fc.integer({ min: 100, max: 120_000 });

describe("the wait between reads of a running compaction", () => {
  it("is at least the interval, at most a minute unless the interval is longer, and never shrinks as the compaction runs on", () => {
    fc.assert(
      fc.property(intervalArb, fc.integer({ min: 0, max: 86_400_000 }), fc.integer({ min: 0, max: 86_400_000 }), (intervalMs, a, b) => {
        const wait = lookDelayMs(a, intervalMs);
        expect(wait).toBeGreaterThanOrEqual(intervalMs);
        expect(wait).toBeLessThanOrEqual(Math.max(intervalMs, MAX_LOOK_DELAY_MS));
        expect(lookDelayMs(Math.max(a, b), intervalMs)).toBeGreaterThanOrEqual(lookDelayMs(Math.min(a, b), intervalMs));
      }),
    );
  });

  it("sees an end at most an interval, a quarter of the compaction's time or a minute late, whichever the rule allows", () => {
    fc.assert(
      fc.property(intervalArb, fc.integer({ min: 1, max: 6 * 3_600_000 }), (intervalMs, endMs) => {
        const seenAtMs = readsOver(endMs, intervalMs).at(-1)!;
        expect(seenAtMs).toBeGreaterThanOrEqual(endMs);
        expect(seenAtMs - endMs).toBeLessThanOrEqual(Math.max(intervalMs, Math.min(MAX_LOOK_DELAY_MS, endMs * LOOK_LATE_SHARE)));
      }),
    );
  });

  it("reads a compaction shorter than four intervals every interval, as a fixed poll did", () => {
    fc.assert(
      fc.property(intervalArb, fc.double({ min: 0, max: 4, noNaN: true }), (intervalMs, intervals) => {
        const durationMs = Math.floor(intervals * intervalMs);
        const reads = readsOver(durationMs, intervalMs);
        reads.forEach((at, i) => expect(at).toBe((i + 1) * intervalMs));
      }),
    );
  });

  it("never reads more often than a fixed poll, and far less over a long compaction", () => {
    fc.assert(
      fc.property(intervalArb, fc.integer({ min: 1, max: 6 * 3_600_000 }), (intervalMs, durationMs) => {
        expect(readsOver(durationMs, intervalMs).length).toBeLessThanOrEqual(Math.ceil(durationMs / intervalMs) + 1);
      }),
    );
    // At the default interval of 1 s: an hour's compaction, read every second, took 3,600 reads.
    expect(readsOver(3_600_000, 1_000).length).toBeLessThanOrEqual(80);
    expect(readsOver(600_000, 1_000).length).toBeLessThanOrEqual(30);
    expect(readsOver(10_000, 1_000).length).toBeLessThanOrEqual(9);
  });
});
