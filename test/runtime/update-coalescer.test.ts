/**
 * The daemon's update coalescer: store events until the scheduler's next turn
 * become one core step, counted per object; any other event flushes first.
 */
import { describe, expect, it } from "vitest";
import type { SmooshEvent } from "../../src/core/compaction/index.js";
import { createUpdateCoalescer } from "../../src/runtime/compaction/update-coalescer.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";

const setUp = () => {
  const scheduler = new VirtualScheduler({ startMs: 0 });
  const steps: SmooshEvent[] = [];
  const coalescer = createUpdateCoalescer((event) => steps.push(event), scheduler);
  return { scheduler, steps, coalescer };
};

const counts = (event: SmooshEvent | undefined): Array<[string, number]> =>
  event?.type === "objects-updated" ? event.updates.map((u) => [u.object.kind === "view" ? `${u.object.db}/${u.object.ddoc}` : u.object.db, u.count]) : [];

describe("update coalescer", () => {
  it("updates from every timer due at one moment become one step, counted per object in the order first heard", async () => {
    const { scheduler, steps, coalescer } = setUp();
    // Three view passes due at the same moment, each writing on its own turn of the event loop.
    scheduler.setTimeout(() => coalescer.handle({ type: "db-updated", db: "b" }), 5_000);
    scheduler.setTimeout(() => coalescer.handle({ type: "view-updated", db: "a", ddoc: "_design/v" }), 5_000);
    scheduler.setTimeout(() => {
      coalescer.handle({ type: "db-updated", db: "b" });
      coalescer.handle({ type: "db-updated", db: "a" });
    }, 5_000);
    await scheduler.advanceToAsync(5_000, 1);
    expect(steps.length).toBe(1);
    expect(counts(steps[0])).toEqual([
      ["b", 2],
      ["a/_design/v", 1],
      ["a", 1],
    ]);
  });

  it("updates at different moments are different steps", async () => {
    const { scheduler, steps, coalescer } = setUp();
    scheduler.setTimeout(() => coalescer.handle({ type: "db-updated", db: "a" }), 1_000);
    scheduler.setTimeout(() => coalescer.handle({ type: "db-updated", db: "a" }), 2_000);
    await scheduler.advanceToAsync(3_000, 1);
    expect(steps.map(counts)).toEqual([[["a", 1]], [["a", 1]]]);
  });

  it("another event flushes what is pending first, and the flush timer then delivers nothing more", async () => {
    const { scheduler, steps, coalescer } = setUp();
    coalescer.handle({ type: "db-updated", db: "a" });
    coalescer.handle({ type: "db-deleted", db: "a" });
    expect(steps.map((s) => s.type)).toEqual(["objects-updated", "db-deleted"]);
    expect(scheduler.pendingTimers()).toBe(0);
    await scheduler.advanceByAsync(1_000, 1);
    expect(steps.length).toBe(2);
  });

  it("flush delivers at once (a stop, a forced enqueue)", () => {
    const { scheduler, steps, coalescer } = setUp();
    coalescer.handle({ type: "db-updated", db: "a" });
    coalescer.flush();
    expect(counts(steps[0])).toEqual([["a", 1]]);
    expect(scheduler.pendingTimers()).toBe(0);
  });
});
