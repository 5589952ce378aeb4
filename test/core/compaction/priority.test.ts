import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { defaultSmooshConfig, type ChannelConfig } from "../../../src/core/compaction/config.js";
import { channelPriority, quantizePriority, sizePriority } from "../../../src/core/compaction/priority.js";
import type { DbSizeInfo, ViewSizeInfo } from "../../../src/core/compaction/types.js";

const channel = (name: string, overrides: Partial<ChannelConfig> = {}): ChannelConfig => {
  const base = defaultSmooshConfig.channels[name];
  if (base === undefined) throw new Error(`no default channel ${name}`);
  return { ...base, ...overrides };
};

// The seed's eunit cases ran with its old defaults: min_priority 5.0 (ratio) / 16777216 (slack).
const seedDefaults = (name: string): ChannelConfig =>
  channel(name, { minPriority: name.startsWith("slack") ? 16777216 : 5.0 });

const view = (fileBytes: number, activeBytes: number, needsUpgrade = false): ViewSizeInfo => ({
  kind: "view",
  fileBytes,
  activeBytes,
  needsUpgrade,
  compactionRunning: false,
});

const seedPriority = (name: string, info: ViewSizeInfo): number => channelPriority(seedDefaults(name), info);

describe("get_priority: the seed's eunit cases", () => {
  it("t_ratio_view", () => {
    const info = view(5242880, 524288);
    expect(seedPriority("ratio_views", info)).toBe(10);
    expect(seedPriority("slack_views", info)).toBe(0);
    expect(seedPriority("upgrade_views", info)).toBe(0);
  });
  it("t_slack_view", () => {
    const info = view(33554432, 16777215);
    expect(seedPriority("ratio_views", info)).toBe(0);
    expect(seedPriority("slack_views", info)).toBe(16777217);
    expect(seedPriority("upgrade_views", info)).toBe(0);
  });
  it("t_no_data_view: active 0 gives min_priority, upgrade channels included (the quirk)", () => {
    const info = view(5242880, 0);
    expect(seedPriority("ratio_views", info)).toBe(5.0);
    expect(seedPriority("slack_views", info)).toBe(16777216);
    expect(seedPriority("upgrade_views", info)).toBe(5.0);
  });
  it("t_below_min_priority_view", () => {
    const info = view(5242880, 1048576);
    for (const name of ["ratio_views", "slack_views", "upgrade_views"]) expect(seedPriority(name, info)).toBe(0);
  });
  it("t_below_min_size_view", () => {
    const info = view(1048576, 512000);
    for (const name of ["ratio_views", "slack_views", "upgrade_views"]) expect(seedPriority(name, info)).toBe(0);
  });
  it("upgrade channel takes a file needing an upgrade whatever its size", () => {
    expect(seedPriority("upgrade_views", view(10, 10, true))).toBe(1);
    expect(seedPriority("ratio_views", view(10, 10, true))).toBe(0);
  });
  it("CouchDB 3.4 defaults: ratio 2.0, slack 512 MiB", () => {
    expect(channelPriority(channel("ratio_views"), view(5242880, 2097152))).toBe(2.5);
    expect(channelPriority(channel("slack_views"), view(33554432, 16777215))).toBe(0);
  });
});

const db = (fileBytes: number, activeBytes: number, updateSeq: number, compactedSeq?: number): DbSizeInfo => ({
  kind: "db",
  fileBytes,
  activeBytes,
  updateSeq,
  compactedSeq,
  needsUpgrade: false,
  compactionRunning: false,
});

describe("min_changes", () => {
  it("dbs need update_seq - compacted_seq >= min_changes when compacted_seq is known", () => {
    const ratio = channel("ratio_dbs", { minChanges: 100 });
    expect(channelPriority(ratio, db(10_000_000, 1_000_000, 150, 100))).toBe(0);
    expect(channelPriority(ratio, db(10_000_000, 1_000_000, 200, 100))).toBe(10);
    expect(channelPriority(ratio, db(10_000_000, 1_000_000, 5))).toBe(10);
  });
  it("views ignore it", () => {
    expect(channelPriority(channel("ratio_views", { minChanges: 1e9 }), view(10_000_000, 1_000_000))).toBe(10);
  });
});

const sizes = fc.record({
  fileBytes: fc.integer({ min: 0, max: 2 ** 40 }),
  activeBytes: fc.integer({ min: 0, max: 2 ** 40 }),
});
const rule = fc.record({
  priority: fc.constantFrom("ratio" as const, "slack" as const, "upgrade" as const),
  minPriority: fc.oneof(fc.double({ min: 0, max: 100, noNaN: true }), fc.integer({ min: 0, max: 2 ** 32 })),
  maxPriority: fc.oneof(fc.constant(Infinity), fc.integer({ min: 0, max: 2 ** 40 })),
  minSizeBytes: fc.integer({ min: 0, max: 2 ** 30 }),
  maxSizeBytes: fc.oneof(fc.constant(Infinity), fc.integer({ min: 0, max: 2 ** 41 })),
});

describe("priority properties", () => {
  it("0 at or below min_size and above max_size, unless an upgrade is due", () => {
    fc.assert(
      fc.property(rule, sizes, fc.boolean(), (r, s, needsUpgrade) => {
        fc.pre(!(r.priority === "upgrade" && needsUpgrade));
        fc.pre(s.fileBytes <= r.minSizeBytes || s.fileBytes > r.maxSizeBytes);
        expect(sizePriority(r, s.fileBytes, s.activeBytes, needsUpgrade)).toBe(0);
      }),
    );
  });
  it("ratio and slack: the formula inside (min, max], else 0; active 0 gives min_priority", () => {
    fc.assert(
      fc.property(rule, sizes, (r, s) => {
        fc.pre(s.fileBytes > r.minSizeBytes && s.fileBytes <= r.maxSizeBytes);
        const p = sizePriority(r, s.fileBytes, s.activeBytes, false);
        if (s.activeBytes === 0) {
          expect(p).toBe(r.minPriority);
          return;
        }
        const x =
          r.priority === "ratio" ? s.fileBytes / s.activeBytes : r.priority === "slack" ? s.fileBytes - s.activeBytes : 0;
        const inside = r.priority !== "upgrade" && x > r.minPriority && x <= r.maxPriority;
        expect(p).toBe(inside ? x : 0);
      }),
    );
  });
  it("upgrade: 1 whenever the file needs it", () => {
    fc.assert(
      fc.property(rule, sizes, (r, s) => {
        expect(sizePriority({ ...r, priority: "upgrade" }, s.fileBytes, s.activeBytes, true)).toBe(1);
      }),
    );
  });
  it("quantization: integers kept, >= 16 rounded, else nearest 1/16, monotone, positive stays positive", () => {
    const priorities = fc.oneof(fc.double({ min: 0, max: 1e12, noNaN: true }), fc.integer({ min: 0, max: 2 ** 40 }));
    fc.assert(
      fc.property(priorities, priorities, (a, b) => {
        const qa = quantizePriority(a);
        if (Number.isInteger(a)) expect(qa).toBe(a);
        else if (a >= 16) expect(qa).toBe(Math.round(a));
        else {
          expect(Number.isInteger(qa * 16)).toBe(true);
          expect(Math.abs(qa - a)).toBeLessThanOrEqual(1 / 16);
        }
        if (a > 0) expect(qa).toBeGreaterThan(0);
        if (a <= b) expect(qa).toBeLessThanOrEqual(quantizePriority(b));
      }),
    );
    expect(quantizePriority(Infinity)).toBe(Infinity);
    expect(quantizePriority(2.5)).toBe(2.5);
    expect(quantizePriority(2.51)).toBe(2.5);
    expect(quantizePriority(16.4)).toBe(16);
  });
});
