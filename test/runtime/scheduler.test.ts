import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { realScheduler, VirtualScheduler } from "../../src/runtime/scheduler.js";

describe("VirtualScheduler", () => {
  it("fires due timers in time order, FIFO among equal times, and moves the clock to each", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 40 }), fc.integer({ min: 0, max: 1200 }), (delays, advanceMs) => {
        const scheduler = new VirtualScheduler({ startMs: 5000 });
        const fired: { index: number; atMs: number; nowMs: number }[] = [];
        delays.forEach((delayMs, index) => scheduler.setTimeout(() => fired.push({ index, atMs: 5000 + delayMs, nowMs: scheduler.nowMs() }), delayMs));
        const count = scheduler.advanceBy(advanceMs);
        const expected = delays
          .map((delayMs, index) => ({ index, atMs: 5000 + delayMs }))
          .filter((timer) => timer.atMs <= 5000 + advanceMs)
          .sort((a, b) => a.atMs - b.atMs || a.index - b.index);
        expect(fired.map(({ index, atMs }) => ({ index, atMs }))).toEqual(expected);
        for (const f of fired) expect(f.nowMs).toBe(f.atMs);
        expect(count).toBe(expected.length);
        expect(scheduler.nowMs()).toBe(5000 + advanceMs);
        expect(scheduler.pendingTimers()).toBe(delays.length - expected.length);
      }),
    );
  });

  it("includes timers scheduled while firing when they are due, and not the others", () => {
    const scheduler = new VirtualScheduler();
    const log: string[] = [];
    scheduler.setTimeout(() => {
      log.push(`a@${scheduler.nowMs()}`);
      scheduler.setTimeout(() => log.push(`b@${scheduler.nowMs()}`), 0);
      scheduler.setTimeout(() => log.push(`c@${scheduler.nowMs()}`), 50);
      scheduler.setTimeout(() => log.push(`d@${scheduler.nowMs()}`), 500);
    }, 10);
    scheduler.advanceTo(100);
    expect(log).toEqual(["a@10", "b@10", "c@60"]);
    expect(scheduler.nextTimerAtMs()).toBe(510);
    expect(scheduler.nowMs()).toBe(100);
  });

  it("cancelled timers never fire; the clock never goes backwards", () => {
    const scheduler = new VirtualScheduler({ startMs: 100 });
    let fired = false;
    const cancel = scheduler.setTimeout(() => {
      fired = true;
    }, 10);
    cancel();
    cancel();
    expect(scheduler.pendingTimers()).toBe(0);
    scheduler.advanceTo(50);
    expect(scheduler.nowMs()).toBe(100);
    scheduler.advanceBy(-20);
    scheduler.advanceBy(100);
    expect(fired).toBe(false);
    expect(scheduler.nowMs()).toBe(200);
  });

  it("treats negative and NaN delays as 0 and never fires an Infinity timer", () => {
    const scheduler = new VirtualScheduler();
    const log: string[] = [];
    scheduler.setTimeout(() => log.push("neg"), -5);
    scheduler.setTimeout(() => log.push("nan"), Number.NaN);
    scheduler.setTimeout(() => log.push("inf"), Infinity);
    expect(scheduler.runUntilIdle()).toBe(2);
    expect(log).toEqual(["neg", "nan"]);
    expect(scheduler.pendingTimers()).toBe(1);
    expect(scheduler.nowMs()).toBe(0);
  });

  it("runUntilIdle jumps from timer to timer and stops at maxSteps for timers that re-arm forever", () => {
    const scheduler = new VirtualScheduler();
    let ticks = 0;
    const rearm = (): void => {
      ticks++;
      scheduler.setTimeout(rearm, 1000);
    };
    scheduler.setTimeout(rearm, 1000);
    expect(scheduler.runUntilIdle(25)).toBe(25);
    expect(ticks).toBe(25);
    expect(scheduler.nowMs()).toBe(25_000);
  });

  it("advanceByAsync lets promise chains schedule timers that fire within the same advance", async () => {
    const scheduler = new VirtualScheduler();
    const log: number[] = [];
    // Like the runtime: a timer starts async work, whose continuation arms the next timer.
    const loop = (): void => {
      void Promise.resolve()
        .then(() => Promise.resolve())
        .then(() => {
          log.push(scheduler.nowMs());
          if (log.length < 5) scheduler.setTimeout(loop, 100);
        });
    };
    scheduler.setTimeout(loop, 100);
    await scheduler.advanceByAsync(1000);
    expect(log).toEqual([100, 200, 300, 400, 500]);
    // The sync variant runs continuations only after the whole advance: the clock is already at the end.
    const sync = new VirtualScheduler();
    const syncLog: number[] = [];
    const syncLoop = (): void => {
      void Promise.resolve().then(() => {
        syncLog.push(sync.nowMs());
        sync.setTimeout(syncLoop, 100);
      });
    };
    sync.setTimeout(syncLoop, 100);
    sync.advanceBy(1000);
    await Promise.resolve();
    expect(syncLog).toEqual([1000]);
    expect(sync.nextTimerAtMs()).toBe(1100);
  });

  it("jitter: timers fire late or early by a seeded random amount, early never before they were set", () => {
    let x = 1;
    const random = () => ((x = (x * 48271) % 2147483647) / 2147483647);
    const scheduler = new VirtualScheduler({ jitter: { random, maxLateMs: 500, maxEarlyMs: 200 } });
    const offsets: number[] = [];
    for (let i = 0; i < 200; i++) {
      const setAtMs = scheduler.nowMs();
      const delayMs = 1 + (i % 50) * 10;
      scheduler.setTimeout(() => offsets.push(scheduler.nowMs() - setAtMs - delayMs), delayMs);
      scheduler.runUntilIdle();
    }
    expect(Math.min(...offsets)).toBeLessThan(0);
    expect(Math.max(...offsets)).toBeGreaterThan(0);
    expect(Math.max(...offsets)).toBeLessThanOrEqual(500);
    expect(Math.min(...offsets)).toBeGreaterThanOrEqual(-200);
    for (let i = 0; i < 200; i++) expect(offsets[i]! + 1 + (i % 50) * 10).toBeGreaterThan(0);
  });

  it("bounds pending timers", () => {
    const scheduler = new VirtualScheduler({ maxPendingTimers: 3 });
    for (let i = 0; i < 3; i++) scheduler.setTimeout(() => {}, i);
    expect(() => scheduler.setTimeout(() => {}, 1)).toThrow(/pending timers/);
  });
});

describe("realScheduler", () => {
  it("fires on wall time and can be cancelled", async () => {
    const scheduler = realScheduler({ unref: true });
    const before = scheduler.nowMs();
    let cancelledFired = false;
    scheduler.setTimeout(() => {
      cancelledFired = true;
    }, 1)();
    await new Promise<void>((resolve) => scheduler.setTimeout(resolve, 5));
    expect(scheduler.nowMs()).toBeGreaterThanOrEqual(before);
    expect(cancelledFired).toBe(false);
  });

  it("never runs a callback before its own clock reaches the due time (Node's timers can fire 1 ms early)", async () => {
    const scheduler = realScheduler({ unref: true });
    const early: number[] = [];
    await Promise.all(
      Array.from({ length: 300 }, (_, i) => {
        const delayMs = 1 + (i % 17);
        const dueMs = scheduler.nowMs() + delayMs;
        return new Promise<void>((resolve) =>
          scheduler.setTimeout(() => {
            if (scheduler.nowMs() < dueMs) early.push(dueMs - scheduler.nowMs());
            resolve();
          }, delayMs),
        );
      }),
    );
    expect(early).toEqual([]);
  });
});
