/**
 * Looks at running db jobs (job-looks.ts), for stores that see a compaction's
 * end only in the db's info: pinned by properties over random event sequences
 * on the model shell (harness.ts), which also checks every start's own
 * invariants (concurrency, windows, suspend, never twice).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { objectKey, type CompactionObject, type FetchPurpose, type ObjectInfo, type SmooshConfig, type SmooshEffect, type SmooshEvent } from "../../../src/core/compaction/index.js";
import { lookDelayMs } from "../../../src/core/compaction/look-delay.js";
import { configFrom, Sim } from "./harness.js";

const LOOK_MS = 1_000;
const DBS = ["a", "b", "c", "d"];
const OBJECTS: CompactionObject[] = DBS.map((db) => ({ kind: "db" as const, db }));

const configWith = (concurrency: number, lookMs: number): SmooshConfig => ({
  ...configFrom({
    smoosh: { db_channels: "ratio_dbs", view_channels: "", cleanup_channels: "", wait_secs: "0", rescan_interval: "0", staleness: "0" },
    "smoosh.ratio_dbs": { concurrency: String(concurrency), min_priority: "2" },
  }),
  jobLookIntervalMs: lookMs,
});

/** Five times its live data: ratio_dbs takes it. */
const WASTEFUL: ObjectInfo = { kind: "db", fileBytes: 50_000_000, activeBytes: 10_000_000, updateSeq: 9, compactedSeq: undefined, needsUpgrade: false, compactionRunning: false };

/** Every db wasteful enough to queue; some already being compacted by someone else. */
const infosArb = fc.array(fc.boolean(), { minLength: DBS.length, maxLength: DBS.length }).map((running) => {
  const table = new Map<string, ObjectInfo>(DBS.map((db, i) => [db, { ...WASTEFUL, compactionRunning: running[i] === true }]));
  return (o: CompactionObject): ObjectInfo | "missing" => table.get(o.db) ?? "missing";
});

type Action =
  | { t: "update"; db: number }
  | { t: "answer"; index: number; ok: boolean }
  | { t: "end"; index: number; ok: boolean }
  | { t: "advance"; ms: number }
  | { t: "suspend" }
  | { t: "resume" }
  | { t: "deleted"; db: number };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constant("update" as const), db: fc.nat() }) },
  { weight: 24, arbitrary: fc.record({ t: fc.constant("answer" as const), index: fc.nat(), ok: fc.oneof(fc.constant(true), fc.constant(true), fc.boolean()) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("end" as const), index: fc.nat(), ok: fc.oneof(fc.constant(true), fc.boolean()) }) },
  { weight: 8, arbitrary: fc.record({ t: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 1_500 }) }) },
  { weight: 1, arbitrary: fc.constant({ t: "suspend" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "resume" as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("deleted" as const), db: fc.nat() }) },
);

/** What a start stood on: the reads of its object the core had answered, with when and why. */
interface Read {
  readonly atMs: number;
  readonly step: number;
  readonly purpose: FetchPurpose;
  readonly requestId: number;
  /** Suspends and resumes before the request was sent. */
  readonly pausesBefore: number;
}

/** The model shell, remembering every answered read and every look at a running job. */
class LookingSim extends Sim {
  steps = 0;
  /** Suspends and resumes so far. */
  pauses = 0;
  readonly purposes = new Map<number, { purpose: FetchPurpose; key: string; pausesBefore: number }>();
  readonly reads = new Map<string, Read[]>();
  /** Job id -> when it was last looked at (or became active). */
  readonly lastLook = new Map<number, number>();
  /** Job id -> when it became active. */
  readonly activeSince = new Map<number, number>();
  readonly startsChecked: { key: string; how: "precheck" | "check" | "ahead" | "recent" }[] = [];

  override send(event: SmooshEvent): void {
    this.steps += 1;
    if (event.type === "suspend" || event.type === "resume") this.pauses += 1;
    this.noteAnswers(event);
    if (event.type === "job-started") {
      this.lastLook.set(event.jobId, this.nowMs);
      this.activeSince.set(event.jobId, this.nowMs);
    }
    if (event.type === "job-finished" || event.type === "job-failed") this.lastLook.delete(event.jobId);
    const seen = this.effects.length;
    super.send(event);
    for (const effect of this.effects.slice(seen)) {
      if (effect.type === "fetch-info") {
        this.purposes.set(effect.requestId, { purpose: effect.purpose, key: objectKey(effect.object), pausesBefore: this.pauses });
        if (effect.purpose === "watch" && this.lastLook.has(effect.requestId)) this.lastLook.set(effect.requestId, this.nowMs);
      }
      if (effect.type === "start-job") this.checkGrounds(effect.jobId, objectKey(effect.object));
    }
  }

  /** Answer every request but the running jobs (they end when a test says). */
  answerAll(): void {
    for (let i = this.outstanding.findIndex((o) => o.kind !== "run"); i >= 0; i = this.outstanding.findIndex((o) => o.kind !== "run")) this.answer(i, true);
  }

  /** Answer and follow ticks until a job runs (bounded). */
  untilAJobRuns(): void {
    for (let round = 0; round < 100; round++) {
      this.answerAll();
      if (this.outstanding.some((o) => o.kind === "run")) return;
      if (this.tickAtMs === undefined) break;
      this.advance(this.tickAtMs - this.nowMs);
    }
    throw new Error("no job started");
  }

  /** Answer the `index`-th request (requests only: running jobs end by `end`). */
  answerRequest(index: number, ok: boolean): void {
    const requests = this.outstanding.flatMap((o, i) => (o.kind === "run" ? [] : [i]));
    if (requests.length > 0) this.answer(requests[index % requests.length]!, ok);
  }

  /** The `index`-th running job ends (well or not). */
  end(index: number, ok: boolean): void {
    const runs = this.outstanding.flatMap((o, i) => (o.kind === "run" ? [i] : []));
    if (runs.length > 0) this.answer(runs[index % runs.length]!, ok);
  }

  /** The store saw job `jobId` end. */
  finish(jobId: number): void {
    const i = this.outstanding.findIndex((o) => o.kind === "run" && o.jobId === jobId);
    expect(i, `job ${jobId} is not running`).toBeGreaterThanOrEqual(0);
    this.answer(i, true);
  }

  private noteAnswers(event: SmooshEvent): void {
    const answered = event.type === "info-fetched" ? [event.requestId] : event.type === "infos-fetched" ? event.answers.map((a) => a.requestId) : [];
    const ok = event.type !== "info-failed";
    for (const requestId of answered) {
      const asked = this.purposes.get(requestId);
      if (asked === undefined || !ok) continue;
      const list = this.reads.get(asked.key) ?? [];
      list.push({ atMs: this.nowMs, step: this.steps, purpose: asked.purpose, requestId, pausesBefore: asked.pausesBefore });
      this.reads.set(asked.key, list);
    }
  }

  /**
   * A start stands on its own precheck, a check answered in that very step,
   * or (looks on) a read at most one interval old, asked for since the last
   * suspend or resume: a read that may predate a pause never stands in (the
   * daemon contract: someone else may start a compaction meanwhile).
   */
  private checkGrounds(jobId: number, key: string): void {
    const reads = this.reads.get(key) ?? [];
    if (reads.some((r) => r.purpose === "precheck" && r.requestId === jobId)) return void this.startsChecked.push({ key, how: "precheck" });
    if (reads.some((r) => r.purpose === "enqueue" && r.step === this.steps)) return void this.startsChecked.push({ key, how: "check" });
    const recent = reads.find(
      (r) => (r.purpose === "precheck-ahead" || r.purpose === "enqueue") && r.atMs >= this.nowMs - this.config.jobLookIntervalMs && r.pausesBefore === this.pauses,
    );
    expect(this.config.jobLookIntervalMs > 0 && recent !== undefined, `start of ${key} at ${this.nowMs} with no fresh read behind it: ${JSON.stringify(reads)}`).toBe(true);
    this.startsChecked.push({ key, how: recent?.purpose === "precheck-ahead" ? "ahead" : "recent" });
  }
}

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length] as T;

const run = (sim: LookingSim, actions: readonly Action[]): void => {
  for (const a of actions) {
    if (a.t === "update") sim.send({ type: "object-updated", object: pick(OBJECTS, a.db) });
    else if (a.t === "answer") sim.answerRequest(a.index, a.ok);
    else if (a.t === "end") sim.end(a.index, a.ok);
    else if (a.t === "advance") sim.advance(a.ms);
    else if (a.t === "deleted") sim.send({ type: "db-deleted", db: pick(DBS, a.db) });
    else sim.send({ type: a.t });
    // Every running db job was looked at within its wait (an interval while young, longer as it
    // runs on: look-delay.ts), counted from its last look (ticks up to now delivered).
    if (sim.config.jobLookIntervalMs === 0) continue;
    for (const job of sim.state.jobs.values()) {
      if (job.phase !== "active") continue;
      const atMs = sim.lastLook.get(job.jobId);
      expect(atMs, `job ${job.jobId} became active unseen`).toBeDefined();
      const waitMs = lookDelayMs(atMs! - sim.activeSince.get(job.jobId)!, LOOK_MS);
      expect(sim.nowMs - atMs!, `job ${job.jobId} not looked at since ${atMs}`).toBeLessThan(waitMs);
    }
  }
};

const PARAMS = { numRuns: 400, seed: 80_823 };

describe("looks at running db jobs (jobLookIntervalMs)", () => {
  it("look at every running db job within its wait (an interval while young), and start only on a precheck, a check of this step, or a read at most an interval old and not asked across a suspend or resume", () => {
    let aheadStarts = 0;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 }), infosArb, fc.array(actionArb, { minLength: 30, maxLength: 150 }), (concurrency, infoOf, actions) => {
        const sim = new LookingSim(configWith(concurrency, LOOK_MS), infoOf);
        // Every db written first, so that channels fill and queues form.
        sim.send({ type: "objects-updated", updates: OBJECTS.map((object) => ({ object, count: 1 })) });
        run(sim, actions);
        aheadStarts += sim.startsChecked.filter((s) => s.how === "ahead").length;
      }),
      PARAMS,
    );
    // The property must really exercise starts on a look ahead.
    expect(aheadStarts).toBeGreaterThan(20);
  });

  it("never look ahead when the store watches its jobs alone (jobLookIntervalMs 0)", () => {
    fc.assert(
      fc.property(infosArb, fc.array(actionArb, { minLength: 20, maxLength: 100 }), (infoOf, actions) => {
        const sim = new LookingSim(configWith(1, 0), infoOf);
        run(sim, actions);
        expect(sim.effectsOf("fetch-info").filter((e) => e.purpose === "precheck-ahead")).toEqual([]);
        expect(sim.startsChecked.filter((s) => s.how === "ahead" || s.how === "recent")).toEqual([]);
      }),
      PARAMS,
    );
  });

  it("look at running db jobs together: due looks are at least an interval apart however many jobs run, and each looks at every running db job", () => {
    let jointLooks = 0;
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 3 }), infosArb, fc.array(actionArb, { minLength: 30, maxLength: 150 }), (concurrency, infoOf, actions) => {
        const sim = new LookingSim(configWith(concurrency, LOOK_MS), infoOf);
        sim.send({ type: "objects-updated", updates: OBJECTS.map((object) => ({ object, count: 1 })) });
        let lastLookMs: number | undefined;
        const send = sim.send.bind(sim);
        const activeDbJobs = () => [...sim.state.jobs.values()].filter((job) => job.phase === "active" && job.object.kind === "db");
        sim.send = (event) => {
          // A due look (not a running job riding along with checks, which costs no request of its own).
          const due = event.type === "tick" && activeDbJobs().some((job) => job.nextLookAtMs !== undefined && job.nextLookAtMs <= sim.nowMs);
          const seen = sim.effects.length;
          send(event);
          if (!due) return;
          const watched = new Set(sim.effects.slice(seen).flatMap((e) => (e.type === "fetch-info" && e.purpose === "watch" ? [e.requestId] : [])));
          if (lastLookMs !== undefined) expect(sim.nowMs - lastLookMs, `looks at ${lastLookMs} and ${sim.nowMs}`).toBeGreaterThanOrEqual(LOOK_MS);
          lastLookMs = sim.nowMs;
          const running = activeDbJobs().map((job) => job.jobId);
          expect(running.filter((jobId) => !watched.has(jobId)), `looked at ${[...watched].join(",")} at ${sim.nowMs}`).toEqual([]);
          if (watched.size > 1) jointLooks++;
        };
        run(sim, actions);
      }),
      PARAMS,
    );
    // The property must really see several jobs looked at in one step.
    expect(jointLooks).toBeGreaterThan(20);
  });

  it("are deterministic: the same events give the same effects", () => {
    fc.assert(
      fc.property(infosArb, fc.array(actionArb, { minLength: 20, maxLength: 100 }), (infoOf, actions) => {
        const one = new LookingSim(configWith(1, LOOK_MS), infoOf);
        const two = new LookingSim(configWith(1, LOOK_MS), infoOf);
        run(one, actions);
        run(two, actions);
        expect(two.effects).toEqual(one.effects);
      }),
      { ...PARAMS, numRuns: 100 },
    );
  });
});

/** `a` compacting in a channel of concurrency 1, `b` queued behind it. */
const aRunsBWaits = (): { sim: LookingSim; jobOfA: number } => {
  const sim = new LookingSim(configWith(1, LOOK_MS), () => WASTEFUL);
  sim.send({ type: "object-updated", object: { kind: "db", db: "a" } });
  sim.send({ type: "object-updated", object: { kind: "db", db: "b" } });
  sim.untilAJobRuns();
  const [first] = sim.effectsOf("start-job");
  expect(first?.object.db).toBe("a");
  return { sim, jobOfA: first!.jobId };
};

/** What the core asks for once the store has seen a's job end. */
const afterTheEnd = (sim: LookingSim, jobOfA: number): { fetched: [string, string][]; started: string[] } => {
  const atEnd = sim.effects.length;
  sim.finish(jobOfA);
  const after = sim.effects.slice(atEnd);
  return {
    fetched: after.flatMap((e): [string, string][] => (e.type === "fetch-info" ? [[e.object.db, e.purpose]] : [])),
    started: after.flatMap((e) => (e.type === "start-job" ? [e.object.db] : [])),
  };
};

type StartJob = Extract<SmooshEffect, { type: "start-job" }>;

/** `a` and `b` compacting in a channel of concurrency 2, `c` and `d` queued behind them. */
const aAndBRunCAndDWait = (): { sim: LookingSim; first: StartJob; second: StartJob } => {
  const sim = new LookingSim(configWith(2, LOOK_MS), () => WASTEFUL);
  sim.send({ type: "objects-updated", updates: OBJECTS.map((object) => ({ object, count: 1 })) });
  sim.untilAJobRuns();
  sim.answerAll();
  const [first, second] = sim.effectsOf("start-job");
  expect([first?.object.db, second?.object.db]).toEqual(["a", "b"]);
  return { sim, first: first!, second: second! };
};

describe("a long compaction", () => {
  it("is looked at less and less often, as look-delay.ts says: 79 looks in an hour instead of 3,600, and never two within an interval", () => {
    const { sim, jobOfA } = aRunsBWaits();
    const startedAtMs = sim.activeSince.get(jobOfA)!;
    const looksAtMs: number[] = [];
    const send = sim.send.bind(sim);
    sim.send = (event) => {
      const seen = sim.effects.length;
      send(event);
      if (sim.effects.slice(seen).some((e) => e.type === "fetch-info" && e.purpose === "watch" && e.requestId === jobOfA)) looksAtMs.push(sim.nowMs - startedAtMs);
    };
    while (sim.nowMs - startedAtMs < 3_600_000) {
      sim.answerAll();
      sim.advance(sim.tickAtMs! - sim.nowMs);
    }
    expect(looksAtMs.length).toBe(79);
    // Each look waits what the rule gives for the job's running time at the look before.
    looksAtMs.forEach((atMs, i) => expect(atMs - (looksAtMs[i - 1] ?? 0)).toBe(lookDelayMs(looksAtMs[i - 1] ?? 0, LOOK_MS)));
  });
});

describe("jobs that began at different times", () => {
  it("are looked at together, in one step", () => {
    const { sim, first } = aAndBRunCAndDWait();
    // a ends 300 ms in; c takes its slot then, 700 ms before b's look is due.
    sim.advance(300);
    sim.finish(first.jobId);
    sim.answerAll();
    const third = sim.effectsOf("start-job")[2];
    expect(third?.object.db).toBe("c");
    const before = sim.effects.length;
    sim.advance(LOOK_MS);
    const watched = sim.effects.slice(before).flatMap((e) => (e.type === "fetch-info" && e.purpose === "watch" ? [e.object.db] : []));
    expect(watched.sort()).toEqual(["b", "c"]);
  });
});

describe("a look at two running jobs", () => {
  it("carries the channel's next two dbs: when it sees both ends, both starts need no precheck of their own", () => {
    const { sim, first, second } = aAndBRunCAndDWait();
    const before = sim.effects.length;
    sim.advance(LOOK_MS);
    const look = sim.effects.slice(before).flatMap((e) => (e.type === "fetch-info" ? [[e.object.db, e.purpose]] : []));
    expect(look).toEqual([
      ["a", "watch"],
      ["b", "watch"],
      ["c", "precheck-ahead"],
      ["d", "precheck-ahead"],
    ]);
    sim.answerAll();
    // The store sees both ends in that answer: c and d start with no fetch first.
    const atEnds = sim.effects.length;
    sim.finish(first.jobId);
    sim.finish(second.jobId);
    const after = sim.effects.slice(atEnds);
    expect(after.filter((e) => e.type === "fetch-info")).toEqual([]);
    expect(after.flatMap((e) => (e.type === "start-job" ? [e.object.db] : []))).toEqual(["c", "d"]);
  });
});

describe("a look that sees the slot free", () => {
  it("carries the channel's next db, whose start then needs no precheck of its own", () => {
    const { sim, jobOfA } = aRunsBWaits();
    // One interval on: the look at a's job goes out with b, in one step.
    const before = sim.effects.length;
    sim.advance(LOOK_MS);
    const look = sim.effects.slice(before).filter((e) => e.type === "fetch-info");
    expect(look.map((e) => [e.object.db, e.purpose])).toEqual([
      ["a", "watch"],
      ["b", "precheck-ahead"],
    ]);
    sim.answerAll();
    // The store sees a's end in that answer: b starts in the same step, with no fetch first.
    expect(afterTheEnd(sim, jobOfA)).toEqual({ fetched: [], started: ["b"] });
  });

  it("does not stand in after a suspend and a resume: the start asks again", () => {
    const { sim, jobOfA } = aRunsBWaits();
    sim.advance(LOOK_MS);
    sim.answerAll();
    sim.send({ type: "suspend" });
    sim.send({ type: "resume" });
    expect(afterTheEnd(sim, jobOfA)).toEqual({ fetched: [["b", "precheck"]], started: [] });
  });

  it("does not stand in when it was asked for before a pause and landed after it (its read may predate b's start by someone else)", () => {
    const { sim, jobOfA } = aRunsBWaits();
    sim.advance(LOOK_MS);
    sim.send({ type: "suspend" });
    sim.send({ type: "resume" });
    sim.answerAll();
    expect(afterTheEnd(sim, jobOfA)).toEqual({ fetched: [["b", "precheck"]], started: [] });
  });
});
