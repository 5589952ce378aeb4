/**
 * ken's start rule, against a line-by-line transliteration of the seed's
 * `should_start_job/2` (ken_server.erl), and the properties the daemon
 * relies on.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shouldStartJob, type JobEntry } from "../../../src/core/indexing/index.js";

interface Rule {
  batchChannels: number;
  incrementalChannels: number;
  maxIncrementalUpdates: number;
  batchSize: number;
  kenDelayMs: number;
}

/** The Erlang, transliterated: `Threshold`, `TotalChannels`, `A`, `#job{seq, lru, worker_pid}`. */
function seedShouldStart(job: JobEntry | undefined, seq: number, currentSeq: number, a: number, nowMs: number, c: Rule): boolean {
  const threshold = c.maxIncrementalUpdates;
  const totalChannels = c.incrementalChannels + c.batchChannels;
  if (job === undefined) {
    if (a < c.batchChannels) return true;
    if (a < totalChannels) return seq - currentSeq < threshold;
    return false;
  }
  if (job.running) return false; // `_ -> false`: worker_pid is a pid
  const deltaT = nowMs - job.lastRunMs;
  if (a < c.batchChannels && seq - job.seq >= c.batchSize) return true;
  if (a < c.batchChannels && deltaT > c.kenDelayMs) return true;
  if (a < totalChannels && seq - job.seq < threshold && deltaT > c.kenDelayMs) return true;
  return false;
}

const rule = fc.record({
  batchChannels: fc.integer({ min: 0, max: 25 }),
  incrementalChannels: fc.integer({ min: 0, max: 85 }),
  maxIncrementalUpdates: fc.integer({ min: 1, max: 2000 }),
  batchSize: fc.integer({ min: 1, max: 10 }),
  kenDelayMs: fc.integer({ min: 0, max: 10_000 }),
});
const entry = fc.option(fc.record({ seq: fc.integer({ min: 0, max: 5000 }), lastRunMs: fc.integer({ min: 0, max: 20_000 }), running: fc.boolean() }), { nil: undefined });
const question = fc.record({
  entry,
  dbSeq: fc.integer({ min: 0, max: 6000 }),
  indexSeq: fc.integer({ min: 0, max: 6000 }),
  active: fc.integer({ min: 0, max: 120 }),
  nowMs: fc.integer({ min: 0, max: 30_000 }),
});

describe("ken's should_start_job", () => {
  it("says yes exactly when the seed does", () => {
    fc.assert(
      fc.property(rule, question, (c, q) => {
        const answer = shouldStartJob(q, c);
        expect(answer.start).toBe(seedShouldStart(q.entry, q.dbSeq, q.indexSeq, q.active, q.nowMs, c));
      }),
    );
  });

  it("never starts a running job, nor past the channels; a yes below batch_channels is a batch channel", () => {
    fc.assert(
      fc.property(rule, question, (c, q) => {
        const answer = shouldStartJob(q, c);
        if (q.entry?.running === true || q.active >= c.batchChannels + c.incrementalChannels) expect(answer.start).toBe(false);
        if (answer.start) expect(answer.channel).toBe(q.active < c.batchChannels ? "batch" : "incremental");
      }),
    );
  });

  it("a too-soon refusal names the moment the rule says yes (with the same room)", () => {
    fc.assert(
      fc.property(rule, question, (c, q) => {
        const answer = shouldStartJob(q, c);
        if (answer.start || answer.reason !== "too-soon") return;
        expect(answer.retryAtMs).toBeDefined();
        expect(shouldStartJob({ ...q, nowMs: answer.retryAtMs! }, c).start).toBe(true);
      }),
    );
  });
});
