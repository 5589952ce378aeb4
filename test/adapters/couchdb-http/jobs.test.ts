/** Watching a compaction: on a server that does not report `compact_running` (PouchDB Server), and a long one. */
import { describe, expect, it } from "vitest";
import { watchCompaction, type CompactionProbe } from "../../../src/adapters/couchdb-http/jobs.js";
import { silentLogger } from "../../../src/adapters/logging/index.js";
import { fastScheduler } from "./helpers.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";
import { lookDelayMs } from "../../../src/core/compaction/look-delay.js";

const probeOf = (sizes: readonly number[]): CompactionProbe & { polls(): number } => {
  let i = 0;
  return {
    info: async () => ({ fileBytes: sizes[Math.min(i++, sizes.length - 1)] ?? 0, running: undefined }),
    tasks: async () => [],
    matchesTask: () => false,
    polls: () => i,
  };
};

const options = { scheduler: fastScheduler(), logger: silentLogger, pollIntervalMs: 1, maxConsecutiveFailures: 3, stablePolls: 2, label: "GET /grow" };

describe("watchCompaction without compact_running", () => {
  it("is done once the size holds for two polls", async () => {
    const probe = probeOf([9_000, 4_000, 1_000, 1_000, 1_000]);
    expect(await watchCompaction(probe, options, 10_000).done).toEqual({ ok: true, reclaimedBytes: 9_000 });
    expect(probe.polls()).toBe(5);
  });

  it("a poll with no size reported (read as 0) is no evidence: it neither ends the job nor counts as reclaimed", async () => {
    const probe = probeOf([0, 0, 0, 4_000, 1_000, 1_000, 1_000]);
    expect(await watchCompaction(probe, options, 10_000).done).toEqual({ ok: true, reclaimedBytes: 9_000 });
    expect(probe.polls()).toBe(7);
  });
});

describe("watchCompaction of a long compaction", () => {
  it("polls less and less often as it runs on (look-delay.ts): 29 polls for ten minutes instead of 600, and sees the end at most a minute late", async () => {
    const scheduler = new VirtualScheduler({ startMs: 0 });
    const endsAtMs = 600_000;
    const pollsAtMs: number[] = [];
    const probe: CompactionProbe = {
      info: async () => {
        pollsAtMs.push(scheduler.nowMs());
        return { fileBytes: scheduler.nowMs() < endsAtMs ? 10_000 : 1_000, running: scheduler.nowMs() < endsAtMs };
      },
      tasks: async () => [],
      matchesTask: () => false,
    };
    let endSeenAtMs: number | undefined;
    void watchCompaction(probe, { ...options, scheduler, pollIntervalMs: 1_000 }, 10_000).done.then((outcome) => {
      expect(outcome).toEqual({ ok: true, reclaimedBytes: 9_000 });
      endSeenAtMs = scheduler.nowMs();
    });
    await scheduler.advanceByAsync(endsAtMs + 120_000);
    expect(pollsAtMs.length).toBe(29);
    pollsAtMs.forEach((atMs, i) => expect(atMs - (pollsAtMs[i - 1] ?? 0)).toBe(lookDelayMs(pollsAtMs[i - 1] ?? 0, 1_000)));
    expect(endSeenAtMs).toBe(pollsAtMs.at(-1));
    expect(endSeenAtMs! - endsAtMs).toBeLessThanOrEqual(60_000);
  });
});
