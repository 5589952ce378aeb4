/** Watching a compaction on a server that does not report `compact_running` (PouchDB Server). */
import { describe, expect, it } from "vitest";
import { watchCompaction, type CompactionProbe } from "../../../src/adapters/couchdb-http/jobs.js";
import { silentLogger } from "../../../src/adapters/logging/index.js";
import { fastScheduler } from "./helpers.js";

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
