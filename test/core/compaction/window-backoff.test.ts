import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { backoffDelayMs, shouldGiveUp } from "../../../src/core/compaction/backoff.js";
import { inWindow, minuteOfDay, nextWindowBoundaryMs, parseClock } from "../../../src/core/compaction/window.js";

const DAY_MS = 86_400_000;

describe("windows", () => {
  it("parses HH:MM", () => {
    expect(parseClock("00:00")).toBe(0);
    expect(parseClock("23:59")).toBe(1439);
    expect(parseClock("24:00")).toBe(1440);
    for (const bad of ["24:01", "12:60", "1200", "ab:cd", ""]) expect(parseClock(bad)).toBeUndefined();
  });

  it("same day [from, to), wrapping otherwise, from == to always", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1439 }), fc.integer({ min: 0, max: 1440 }), fc.integer({ min: 0, max: 400 * DAY_MS }), (from, to, nowMs) => {
        const m = minuteOfDay(nowMs);
        const open = inWindow({ fromMinute: from, toMinute: to }, nowMs);
        if (from === to) expect(open).toBe(true);
        else if (from < to) expect(open).toBe(m >= from && m < to);
        else expect(open).toBe(m >= from || m < to);
      }),
    );
  });

  it("the window does not change between now and the next boundary, and changes at it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1439 }), fc.integer({ min: 0, max: 1439 }), fc.integer({ min: 0, max: 400 * DAY_MS }), (from, to, nowMs) => {
        fc.pre(from !== to);
        const w = { fromMinute: from, toMinute: to };
        const next = nextWindowBoundaryMs(w, nowMs);
        expect(next).toBeDefined();
        if (next === undefined) return;
        expect(next).toBeGreaterThan(nowMs);
        expect(next - nowMs).toBeLessThanOrEqual(DAY_MS);
        expect(next % 60_000).toBe(0);
        expect(inWindow(w, next - 1)).toBe(inWindow(w, nowMs));
        expect(inWindow(w, next)).toBe(!inWindow(w, next - 1));
      }),
    );
  });
});

describe("back-off", () => {
  const config = fc.record({
    retryInitialSecs: fc.integer({ min: 1, max: 600 }),
    retryMaxSecs: fc.integer({ min: 1, max: 100_000 }),
    retryMaxAttempts: fc.integer({ min: 0, max: 20 }),
  });
  it("delays start at initial, are non-decreasing, doubling until capped at max", () => {
    fc.assert(
      fc.property(config, fc.integer({ min: 1, max: 200 }), (c, n) => {
        const delay = backoffDelayMs(c, n);
        expect(backoffDelayMs(c, 1)).toBe(Math.min(c.retryInitialSecs, c.retryMaxSecs) * 1000);
        expect(backoffDelayMs(c, n + 1)).toBeGreaterThanOrEqual(delay);
        expect(delay).toBeLessThanOrEqual(c.retryMaxSecs * 1000);
        expect(delay).toBeGreaterThan(0);
        const next = backoffDelayMs(c, n + 1);
        expect(next === c.retryMaxSecs * 1000 || next === 2 * delay).toBe(true);
      }),
    );
  });
  it("gives up after max attempts; 0 means never", () => {
    fc.assert(
      fc.property(config, fc.integer({ min: 1, max: 100 }), (c, n) => {
        expect(shouldGiveUp(c, n)).toBe(c.retryMaxAttempts > 0 && n > c.retryMaxAttempts);
      }),
    );
  });
});
