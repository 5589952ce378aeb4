import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  encodeKey,
  initialListenerState,
  initialWriterState,
  listenerPendingCount,
  listenerStep,
  retryDelayMs,
  writerPendingCount,
  writerStep,
  type ListenerSettings,
  type ListenerState,
  type WriterSettings,
  type WriterState,
} from "../../src/core/db-updates/index.js";

const listenerSettings = (over: Partial<ListenerSettings> = {}): ListenerSettings => ({
  updateDb: true,
  maxEventDelayMs: 25,
  maxPendingKeys: 1_000,
  feedDbName: "feed",
  ...over,
});

const writerSettings = (over: Partial<WriterSettings> = {}): WriterSettings => ({
  updateDb: true,
  maxWriteDelayMs: 500,
  maxPendingKeys: 1_000,
  maxWriteBatch: 1_000,
  retryInitialDelayMs: 100,
  retryMaxDelayMs: 5_000,
  ...over,
});

const dbName = fc.constantFrom("a", "b", "c", "d", "feed");
const eventType = fc.constantFrom("created", "updated", "deleted" as const);
/** A timeline: gaps between inputs, each either an event or a tick. */
const timeline = fc.array(
  fc.record({ gapMs: fc.integer({ min: 0, max: 60 }), event: fc.option(fc.tuple(eventType, dbName), { nil: undefined }) }),
  { maxLength: 80 },
);

interface Released {
  readonly key: string;
  readonly atMs: number;
  /** Arrival time of the first event after the previous release (tracked by the driver, not the code under test). */
  readonly batchOpenedAtMs: number;
}

/** Drives the listener like the runtime does: inputs at their times, ticks at the wake-up times it asks for. */
function runListener(delayMs: number, steps: { gapMs: number; event: readonly [string, string] | undefined }[]) {
  let state: ListenerState = initialListenerState(listenerSettings({ maxEventDelayMs: delayMs }));
  let wakeAtMs: number | undefined;
  let nowMs = 1_000;
  const arrivals: { key: string; atMs: number }[] = [];
  const released: Released[] = [];
  let batchOpenedAtMs: number | undefined;
  const apply = (input: Parameters<typeof listenerStep>[1], atMs: number) => {
    if (input.type === "db-event" && input.key.db !== "feed") batchOpenedAtMs ??= atMs;
    const out = listenerStep(state, input, atMs);
    state = out.state;
    wakeAtMs = out.wakeAtMs;
    if (out.released.length > 0) {
      for (const key of out.released) released.push({ key, atMs, batchOpenedAtMs: batchOpenedAtMs! });
      batchOpenedAtMs = undefined;
    }
  };
  for (const step of steps) {
    const target = nowMs + step.gapMs;
    while (wakeAtMs !== undefined && wakeAtMs <= target) apply({ type: "tick" }, wakeAtMs);
    nowMs = target;
    if (step.event) {
      const [type, db] = step.event;
      const key = { type: type as "created", db };
      arrivals.push({ key: encodeKey(key), atMs: nowMs });
      apply({ type: "db-event", key }, nowMs);
    }
  }
  while (wakeAtMs !== undefined) apply({ type: "tick" }, wakeAtMs);
  return { arrivals, released, state };
}

describe("listener batching", () => {
  it("never releases before the delay and always by the delay after the batch's first event; nothing lost, feed db ignored", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), timeline, (delayMs, steps) => {
        const { arrivals, released, state } = runListener(delayMs, steps);
        expect(listenerPendingCount(state)).toBe(0);
        for (const a of arrivals) {
          if (a.key.endsWith(":feed")) {
            expect(released.some((r) => r.key === a.key)).toBe(false);
            continue;
          }
          // Released by arrival + delay (the batch opened at or before the arrival)...
          const r = released.find((x) => x.key === a.key && x.atMs >= a.atMs);
          expect(r).toBeDefined();
          expect(r!.atMs).toBeLessThanOrEqual(a.atMs + delayMs);
        }
        // ...and never before the delay after the first event of its batch.
        for (const r of released) expect(r.atMs).toBeGreaterThanOrEqual(r.batchOpenedAtMs + delayMs);
      }),
    );
  });

  it("collapse keeps one entry per key", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(eventType, dbName), { maxLength: 200 }), (events) => {
        let state = initialListenerState(listenerSettings({ maxEventDelayMs: 10 }));
        for (const [type, db] of events) state = listenerStep(state, { type: "db-event", key: { type, db } }, 0).state;
        const distinct = new Set(events.filter(([, db]) => db !== "feed").map(([type, db]) => `${type}:${db}`));
        expect(listenerPendingCount(state)).toBe(distinct.size);
        const out = listenerStep(state, { type: "tick" }, 10);
        expect([...out.released].sort()).toEqual([...distinct].sort());
      }),
    );
  });

  it("update_db=false drops events and clears pending state", () => {
    let state = initialListenerState(listenerSettings());
    state = listenerStep(state, { type: "db-event", key: { type: "created", db: "a" } }, 0).state;
    expect(listenerPendingCount(state)).toBe(1);
    const off = listenerStep(state, { type: "configure", settings: listenerSettings({ updateDb: false }) }, 1);
    expect(listenerPendingCount(off.state)).toBe(0);
    expect(off.wakeAtMs).toBeUndefined();
    const dropped = listenerStep(off.state, { type: "db-event", key: { type: "created", db: "b" } }, 2);
    expect(listenerPendingCount(dropped.state)).toBe(0);
    expect(listenerStep(dropped.state, { type: "tick" }, 100).released).toEqual([]);
  });

  it("reaching max_pending_keys releases early instead of growing", () => {
    let state = initialListenerState(listenerSettings({ maxPendingKeys: 3 }));
    const released: string[] = [];
    for (const db of ["a", "b", "c", "d"]) {
      const out = listenerStep(state, { type: "db-event", key: { type: "updated", db } }, 0);
      state = out.state;
      released.push(...out.released);
      expect(listenerPendingCount(state)).toBeLessThan(3);
    }
    expect(released).toEqual(["updated:a", "updated:b", "updated:c"]);
  });
});

type WriterEvent = { kind: "keys"; keys: string[] } | { kind: "finish"; ok: boolean } | { kind: "wait" };

describe("writer batching", () => {
  const keyArb = fc.constantFrom("created:a", "updated:a", "updated:b", "deleted:c", "updated:d");
  const writerTimeline = fc.array(
    fc.record({
      gapMs: fc.integer({ min: 0, max: 700 }),
      what: fc.oneof(
        fc.record({ kind: fc.constant("keys" as const), keys: fc.array(keyArb, { minLength: 1, maxLength: 4 }) }),
        fc.record({ kind: fc.constant("finish" as const), ok: fc.boolean() }),
        fc.constant({ kind: "wait" as const }),
      ),
    }),
    { maxLength: 60 },
  );

  it("never writes before the window, writes by the window (or retry time), and every accepted key is written or still held", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 600 }), writerTimeline, (delayMs, steps) => {
        const settings = writerSettings({ maxWriteDelayMs: delayMs });
        let state: WriterState = initialWriterState(settings);
        let wakeAtMs: number | undefined;
        let nowMs = 0;
        const accepted = new Map<string, number>(); // key -> earliest unwritten arrival
        const written = new Set<string>();
        const apply = (input: Parameters<typeof writerStep>[1], atMs: number) => {
          const before = state;
          const out = writerStep(state, input, atMs);
          state = out.state;
          wakeAtMs = out.wakeAtMs;
          expect(out.dropped).toEqual([]);
          if (out.write) {
            expect(before.inFlight === undefined || input.type === "write-finished").toBe(true);
            // Not before the window of the batch (unless a retry was due or the batch spilled over).
            if (before.retryAtMs === undefined && before.pending.openedAtMs !== undefined) {
              expect(atMs).toBeGreaterThanOrEqual(before.pending.openedAtMs + delayMs);
            }
            if (before.retryAtMs !== undefined) expect(atMs).toBeGreaterThanOrEqual(before.retryAtMs);
          }
        };
        for (const step of steps) {
          const target = nowMs + step.gapMs;
          while (wakeAtMs !== undefined && wakeAtMs <= target) apply({ type: "tick" }, wakeAtMs);
          nowMs = target;
          const w = step.what as WriterEvent;
          if (w.kind === "keys") {
            for (const k of w.keys) if (!accepted.has(k)) accepted.set(k, nowMs);
            apply({ type: "keys", keys: w.keys }, nowMs);
          } else if (w.kind === "finish" && state.inFlight) {
            const inFlight = state.inFlight;
            if (w.ok) for (const k of inFlight) if (!state.pending.keys.get(k)) { written.add(k); accepted.delete(k); }
            apply({ type: "write-finished", failed: w.ok ? [] : inFlight }, nowMs);
          }
        }
        // Whatever was accepted and not written is still held: pending or in flight.
        for (const key of accepted.keys()) {
          const held = state.pending.keys.get(key) !== undefined || (state.inFlight ?? []).includes(key);
          expect(held).toBe(true);
        }
        // With pending keys and nothing in flight, the writer always asks to be woken (no stall).
        if (state.inFlight === undefined && writerPendingCount(state) > 0) expect(wakeAtMs).toBeDefined();
      }),
    );
  });

  it("failed writes retry with capped exponential back-off and keep their keys", () => {
    const settings = writerSettings({ maxWriteDelayMs: 0, retryInitialDelayMs: 100, retryMaxDelayMs: 400 });
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(settings, n))).toEqual([100, 200, 400, 400, 400]);
    let out = writerStep(initialWriterState(settings), { type: "keys", keys: ["updated:a"] }, 0);
    expect(out.write).toEqual(["updated:a"]);
    out = writerStep(out.state, { type: "write-finished", failed: ["updated:a"] }, 5);
    expect(out.write).toBeUndefined();
    expect(out.wakeAtMs).toBe(105);
    out = writerStep(out.state, { type: "keys", keys: ["updated:a", "updated:b"] }, 50);
    expect(out.write).toBeUndefined();
    expect(writerPendingCount(out.state)).toBe(2);
    out = writerStep(out.state, { type: "tick" }, 104);
    expect(out.write).toBeUndefined();
    out = writerStep(out.state, { type: "tick" }, 105);
    expect(out.write).toEqual(["updated:a", "updated:b"]);
    out = writerStep(out.state, { type: "write-finished", failed: [] }, 106);
    expect(out.state.failures).toBe(0);
    expect(writerPendingCount(out.state)).toBe(0);
  });

  it("bounds distinct keys: new keys past max_pending_keys are dropped and reported, repeats are not", () => {
    const settings = writerSettings({ maxPendingKeys: 2 });
    let out = writerStep(initialWriterState(settings), { type: "keys", keys: ["k1", "k2", "k3", "k1"] }, 0);
    expect(out.dropped).toEqual(["k3"]);
    expect(writerPendingCount(out.state)).toBe(2);
    out = writerStep(out.state, { type: "keys", keys: ["k2"] }, 1);
    expect(out.dropped).toEqual([]);
  });

  it("writes at most max_write_batch keys at a time and the rest right after", () => {
    const settings = writerSettings({ maxWriteDelayMs: 10, maxWriteBatch: 2 });
    let out = writerStep(initialWriterState(settings), { type: "keys", keys: ["a", "b", "c"] }, 0);
    out = writerStep(out.state, { type: "tick" }, 10);
    expect(out.write).toEqual(["a", "b"]);
    out = writerStep(out.state, { type: "write-finished", failed: [] }, 11);
    expect(out.write).toEqual(["c"]);
  });

  it("update_db=false clears pending keys and drops new ones", () => {
    let out = writerStep(initialWriterState(writerSettings()), { type: "keys", keys: ["a"] }, 0);
    out = writerStep(out.state, { type: "configure", settings: writerSettings({ updateDb: false }) }, 1);
    expect(writerPendingCount(out.state)).toBe(0);
    out = writerStep(out.state, { type: "keys", keys: ["b"] }, 2);
    expect(writerPendingCount(out.state)).toBe(0);
    expect(out.write).toBeUndefined();
  });
});
