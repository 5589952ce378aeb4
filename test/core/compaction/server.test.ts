import { describe, expect, it } from "vitest";
import { SmooshSnapshotC, smooshStatus, activeJobs, type ObjectInfo, type CompactionObject } from "../../../src/core/compaction/index.js";
import { configFrom, Sim } from "./harness.js";

const T0 = Date.UTC(2026, 0, 1, 12, 0); // 12:00 UTC
const bigDb = (over: Partial<Extract<ObjectInfo, { kind: "db" }>> = {}): ObjectInfo => ({
  kind: "db",
  fileBytes: 100 * 1024 ** 2,
  activeBytes: 10 * 1024 ** 2,
  updateSeq: 1,
  needsUpgrade: false,
  compactionRunning: false,
  ...over,
});
const dbA: CompactionObject = { kind: "db", db: "a" };
// These examples are about other rules: checks go out at once (no coalescing window, a generous budget).
const base = { rescan_interval: "0", wait_secs: "30", min_check_interval_ms: "0", check_requests_per_sec: "1000" };

describe("smoosh reducer examples", () => {
  it("channels start paused and unpause after wait_secs via a scheduled tick", () => {
    const sim = new Sim(configFrom({ smoosh: base }), () => bigDb(), [], () => [], T0);
    expect(sim.tickAtMs).toBe(T0 + 30_000);
    sim.send({ type: "object-updated", object: dbA });
    sim.answer(0, true);
    expect(smooshStatus(sim.state).channels["ratio_dbs"]).toEqual({ active: 0, starting: 0, waiting: { size: 1, min: 10, max: 10 } });
    expect(sim.effectsOf("fetch-info").filter((f) => f.purpose === "precheck")).toHaveLength(0);
    sim.advance(30_000);
    sim.answer(0, true); // precheck
    expect(sim.starts).toEqual([{ atMs: T0 + 30_000, channel: "ratio_dbs", object: dbA, adopt: false }]);
    sim.answer(0, true); // job-started
    expect(smooshStatus(sim.state).channels["ratio_dbs"]).toMatchObject({ active: 1, starting: 0 });
    expect(activeJobs(sim.state)).toEqual([{ jobId: expect.any(Number), channel: "ratio_dbs", object: dbA, adopted: false }]);
  });

  it("a tick that comes early (Node fires timers up to 1 ms before Date.now() reaches them) asks for the tick again", () => {
    const sim = new Sim(configFrom({ smoosh: base }), () => bigDb(), [], () => [], T0);
    sim.send({ type: "object-updated", object: dbA });
    sim.answer(0, true); // queued; the channel is paused until T0 + 30 s
    sim.nowMs = T0 + 29_999;
    sim.tickAtMs = undefined; // the shell's timer fired (early): it holds none now
    sim.send({ type: "tick" });
    expect(sim.tickAtMs).toBe(T0 + 30_000); // the regression of issue #7: no tick was asked for again
    sim.advance(1);
    sim.answer(0, true); // precheck
    expect(sim.starts).toEqual([{ atMs: T0 + 30_000, channel: "ratio_dbs", object: dbA, adopt: false }]);
  });

  it("a new config applies to an object already waiting to be checked, at once", () => {
    const waiting = { ...base, min_check_interval_ms: "60000" };
    const sim = new Sim(configFrom({ smoosh: waiting }), () => bigDb(), [], () => [], T0);
    sim.send({ type: "object-updated", object: dbA }); // due after the coalescing window: T0 + 60 s
    sim.advance(1_000);
    expect(sim.effectsOf("fetch-info")).toHaveLength(0);
    sim.send({ type: "config-changed", config: configFrom({ smoosh: { ...waiting, min_check_interval_ms: "1000" } }) });
    sim.advance(0);
    // Due at T0 + 1 s under the new window, without waiting for another update to move it.
    expect(sim.effectsOf("fetch-info").map((f) => f.object)).toEqual([dbA]);
  });

  it("flush empties the check queue too: a written object is looked at again only once written again", () => {
    const waiting = { ...base, min_check_interval_ms: "10000" };
    const sim = new Sim(configFrom({ smoosh: waiting }), () => bigDb(), [], () => [], T0);
    sim.send({ type: "object-updated", object: dbA });
    sim.advance(1_000);
    sim.send({ type: "flush" });
    sim.advance(60_000);
    expect(sim.effectsOf("fetch-info")).toHaveLength(0);
    sim.send({ type: "object-updated", object: dbA });
    sim.advance(10_000);
    expect(sim.effectsOf("fetch-info").map((f) => f.object)).toEqual([dbA]);
  });

  it("events the store may have missed (a feed reconnect) make it rescan every db, under the budget", () => {
    const sim = new Sim(configFrom({ smoosh: base }), () => bigDb(), ["a", "b"], () => [], T0);
    sim.send({ type: "events-missed" });
    expect(sim.effectsOf("list-dbs").map((e) => e.purpose)).toEqual(["rescan"]);
  });

  it("a rescan lists the design docs of dbs it never heard created, and of the others only once a design doc event came", () => {
    const ddocs = (db: string): string[] => (db === "a" || db === "old" ? ["_design/v"] : []);
    const sim = new Sim(configFrom({ smoosh: { ...base, wait_secs: "0" } }), () => bigDb({ fileBytes: 1, activeBytes: 1 }), ["a", "b", "old"], ddocs, T0);
    const rescanListed = (): string[] => {
      const before = sim.effectsOf("list-design-docs").length;
      sim.send({ type: "events-missed" });
      sim.runToQuiescence();
      return sim.effectsOf("list-design-docs").slice(before).map((e) => e.db).sort();
    };
    sim.send({ type: "db-created", db: "a" });
    sim.send({ type: "db-created", db: "b" });
    sim.runToQuiescence();
    // a and b were empty when created: only "old" (there before the daemon listened) is listed.
    expect(rescanListed()).toEqual(["old"]);
    sim.send({ type: "design-doc-updated", db: "a", ddoc: "_design/v" });
    sim.runToQuiescence();
    expect(rescanListed()).toEqual(["a", "old"]);
    // Deleted and created again: empty again, so no listing for it.
    sim.send({ type: "db-deleted", db: "a" });
    sim.send({ type: "db-created", db: "a" });
    sim.runToQuiescence();
    expect(rescanListed()).toEqual(["old"]);
  });

  it("precheck: priority 0 now skips the start, a running compaction is adopted", () => {
    let info = bigDb();
    const sim = new Sim(configFrom({ smoosh: { ...base, wait_secs: "0" } }), () => info, [], () => [], T0);
    sim.send({ type: "object-updated", object: dbA });
    sim.answer(0, true);
    info = bigDb({ activeBytes: 90 * 1024 ** 2 }); // compacted by someone else meanwhile
    sim.answer(0, true);
    expect(sim.starts).toHaveLength(0);
    expect(sim.state.metrics.skippedAtStart).toBe(1);
    info = bigDb({ compactionRunning: true });
    sim.send({ type: "object-updated", object: dbA, force: true });
    sim.answer(0, true);
    sim.answer(0, true);
    expect(sim.starts.map((s) => s.adopt)).toEqual([true]);
    sim.answer(0, true);
    expect(sim.state.metrics).toMatchObject({ adopted: 1, started: 0 });
  });

  it("a check answered in an earlier step never stands in for the precheck, even in the same millisecond", () => {
    // On a real clock two steps often share a millisecond: here a check lands while the daemon
    // is suspended, someone else starts a compaction, and resume comes within the same ms.
    let info = bigDb();
    const sim = new Sim(configFrom({ smoosh: { ...base, wait_secs: "0", min_check_interval_ms: "1000" } }), () => info, [], () => [], T0);
    sim.send({ type: "suspend" });
    sim.send({ type: "object-updated", object: dbA, force: true });
    sim.answer(0, true); // queued, not started (suspended)
    expect(smooshStatus(sim.state).channels["ratio_dbs"]?.waiting.size).toBe(1);
    info = bigDb({ compactionRunning: true });
    sim.send({ type: "resume" }); // same nowMs as the answer
    expect(sim.starts).toHaveLength(0);
    expect(sim.effectsOf("fetch-info").filter((f) => f.purpose === "precheck")).toHaveLength(1);
    sim.answer(0, true); // precheck: running -> adopted
    expect(sim.starts.map((s) => s.adopt)).toEqual([true]);
  });

  it("a forced check arriving while a check of the same object is in flight runs again once it lands", () => {
    let info = bigDb({ activeBytes: 90 * 1024 ** 2 }); // not worth it when first looked at
    const sim = new Sim(configFrom({ smoosh: { ...base, wait_secs: "0" } }), () => info, [], () => [], T0);
    sim.send({ type: "object-updated", object: dbA });
    expect(sim.outstanding).toHaveLength(1);
    sim.send({ type: "object-updated", object: dbA, force: true }); // the operator asks while the first fetch is out
    expect(sim.outstanding).toHaveLength(1);
    sim.answer(0, true); // the old answer: priority 0, nothing queued ...
    info = bigDb();
    expect(sim.outstanding).toHaveLength(1); // ... but the forced check goes out again
    sim.answer(0, true);
    sim.answer(0, true); // precheck
    expect(sim.starts.map((s) => s.object)).toEqual([dbA]);
  });

  it("a db first seen as created is checked too: a polling feed or a restart may meet it already full", () => {
    const sim = new Sim(configFrom({ smoosh: { ...base, wait_secs: "0" } }), () => bigDb(), [], () => [], T0);
    sim.send({ type: "db-created", db: "a" });
    expect(sim.outstanding).toHaveLength(1);
    sim.answer(0, true);
    sim.answer(0, true); // precheck
    expect(sim.starts.map((s) => s.object)).toEqual([dbA]);
  });

  it("staleness: a re-check within `staleness` minutes is skipped unless forced", () => {
    const sim = new Sim(configFrom({ smoosh: { ...base, staleness: "5" } }), () => bigDb(), [], () => [], T0);
    sim.send({ type: "object-updated", object: dbA });
    sim.answer(0, true);
    sim.send({ type: "object-updated", object: dbA });
    expect(sim.outstanding).toHaveLength(0);
    sim.send({ type: "object-updated", object: dbA, force: true });
    expect(sim.outstanding).toHaveLength(1);
  });

  it("max_info_requests bounds requests in flight (dbs travel 100 to a request); a full forced FIFO drops with a metric", () => {
    const sim = new Sim(configFrom({ smoosh: { ...base, max_info_requests: "2", max_pending_checks: "1" } }), () => bigDb(), [], () => [], T0);
    // One burst (the shell coalesces a bulk write's events into one step): one batch, one request.
    sim.send({ type: "objects-updated", updates: ["a", "b", "c", "d"].map((db) => ({ object: { kind: "db" as const, db }, count: 1 })) });
    expect(sim.effectsOf("fetch-info").map((f) => f.object.db)).toEqual(["a", "b", "c", "d"]);
    const views = ["v1", "v2", "v3"].map((v) => ({ kind: "view" as const, db: "e", ddoc: `_design/${v}` }));
    for (const view of views) sim.send({ type: "object-updated", object: view });
    // One request (the db batch) is out: room for one view request only.
    expect(sim.effectsOf("fetch-info").filter((f) => f.object.kind === "view")).toHaveLength(1);
    for (const db of ["f", "g"]) sim.send({ type: "object-updated", object: { kind: "db", db }, force: true });
    expect(sim.state.metrics.droppedAtCapacity).toBe(1); // the forced FIFO holds one
    sim.answer(0, true);
    sim.answer(0, true);
    sim.answer(0, true);
    sim.answer(0, true); // the db batch has landed: a slot is free again
    expect(sim.effectsOf("fetch-info").map((f) => (f.object.kind === "view" ? f.object.ddoc : f.object.db)).slice(5)).toEqual(["f"]);
  });

  it("a window closing suspends a strict channel's jobs and reopening resumes them; no start outside", () => {
    const ini = { smoosh: { ...base, wait_secs: "0" }, "smoosh.ratio_dbs": { from: "12:00", to: "13:00", strict_window: "true" } };
    const sim = new Sim(configFrom(ini), () => bigDb(), [], () => [], T0);
    sim.send({ type: "object-updated", object: dbA });
    sim.answer(0, true);
    sim.answer(0, true);
    sim.answer(0, true);
    expect(sim.tickAtMs).toBe(T0 + 3600_000);
    sim.advance(3600_000);
    expect(sim.effectsOf("suspend-job")).toHaveLength(1);
    sim.send({ type: "object-updated", object: { kind: "db", db: "b" } });
    sim.answer(1, true);
    expect(sim.starts).toHaveLength(1);
    sim.advance(23 * 3600_000);
    expect(sim.effectsOf("resume-job")).toHaveLength(1);
  });

  it("suspend stops starts and suspends jobs; resume undoes it", () => {
    const sim = new Sim(configFrom({ smoosh: { ...base, wait_secs: "0" } }), () => bigDb(), [], () => [], T0);
    sim.send({ type: "object-updated", object: dbA });
    sim.answer(0, true);
    sim.answer(0, true);
    sim.answer(0, true);
    sim.send({ type: "suspend" });
    expect(sim.effectsOf("suspend-job")).toHaveLength(1);
    sim.send({ type: "object-updated", object: { kind: "db", db: "b" } });
    sim.answer(1, true);
    expect(sim.effectsOf("fetch-info").filter((f) => f.purpose === "precheck")).toHaveLength(1);
    sim.send({ type: "resume" });
    expect(sim.effectsOf("resume-job")).toHaveLength(1);
    expect(sim.effectsOf("fetch-info").filter((f) => f.purpose === "precheck")).toHaveLength(1); // concurrency 1 still busy
  });

  it("design doc updated: cleanup and view checked; cleanup_index_files queues a cleanup after a view compaction", () => {
    const infos = (o: CompactionObject): ObjectInfo =>
      o.kind === "cleanup" ? { kind: "cleanup" } : o.kind === "view" ? { kind: "view", fileBytes: 1e8, activeBytes: 1e7, needsUpgrade: false, compactionRunning: false } : bigDb();
    const sim = new Sim(configFrom({ smoosh: { ...base, wait_secs: "0", cleanup_index_files: "true", staleness: "0" } }), infos, [], () => [], T0);
    sim.send({ type: "design-doc-updated", db: "a", ddoc: "_design/x" });
    expect(sim.effectsOf("fetch-info").map((f) => f.object.kind)).toEqual(["cleanup", "view"]);
    sim.runToQuiescence();
    expect(sim.starts.map((s) => `${s.channel}:${s.object.kind}`).sort()).toEqual(["index_cleanup:cleanup", "index_cleanup:cleanup", "ratio_views:view"]);
  });

  it("enqueue_all views lists dbs then design docs, bounded, and checks every view", () => {
    const sim = new Sim(configFrom({ smoosh: { ...base, max_info_requests: "1" } }), () => "missing", ["a", "b", "c"], (db) => [`_design/${db}1`], T0);
    sim.send({ type: "enqueue-all", scope: "views" });
    sim.runToQuiescence();
    expect(sim.effectsOf("list-design-docs").map((l) => l.db)).toEqual(["a", "b", "c"]);
    expect(sim.effectsOf("fetch-info").map((f) => (f.object.kind === "view" ? f.object.ddoc : ""))).toEqual(["_design/a1", "_design/b1", "_design/c1"]);
  });

  it("db-deleted drops queued objects of that db; ignored dbs are never checked", () => {
    const ini = { smoosh: base, "smoosh.ignore": { secret: "true" } };
    const sim = new Sim(configFrom(ini), () => bigDb(), [], () => [], T0);
    sim.send({ type: "object-updated", object: { kind: "db", db: "secret" }, force: true });
    expect(sim.outstanding).toHaveLength(0);
    sim.send({ type: "object-updated", object: dbA });
    sim.answer(0, true);
    sim.send({ type: "db-deleted", db: "a" });
    expect(smooshStatus(sim.state).channels["ratio_dbs"]?.waiting.size).toBe(0);
  });

  it("config change: removed channel's job still counts, new channels start paused, capacity shrink truncates", () => {
    const sim = new Sim(configFrom({ smoosh: { ...base, wait_secs: "0" }, "smoosh.ratio_dbs": { concurrency: "1" } }), () => bigDb(), [], () => [], T0);
    for (const db of ["a", "b", "c"]) sim.send({ type: "object-updated", object: { kind: "db", db } });
    while (sim.outstanding.some((o) => o.kind === "fetch")) sim.answer(sim.outstanding.findIndex((o) => o.kind === "fetch"), true);
    const before = smooshStatus(sim.state).channels["ratio_dbs"];
    expect((before?.active ?? 0) + (before?.starting ?? 0)).toBe(1);
    expect(before?.waiting.size).toBe(2);
    sim.send({ type: "config-changed", config: configFrom({ smoosh: { ...base, wait_secs: "60", db_channels: "ratio_dbs,big_dbs" }, "smoosh.ratio_dbs": { capacity: "1" } }) });
    expect(smooshStatus(sim.state).channels["ratio_dbs"]?.waiting.size).toBe(1);
    expect(Object.keys(smooshStatus(sim.state).channels)).toEqual(["ratio_dbs", "big_dbs", "upgrade_views", "ratio_views", "slack_views", "index_cleanup"]);
    expect(sim.state.channels.get("big_dbs")?.pausedUntilMs).toBe(T0 + 60_000);
    expect(sim.state.metrics.droppedAtCapacity).toBe(1);
    // Remove ratio_dbs: its job stays tracked; re-added, it must not start a second job beside it.
    sim.send({ type: "config-changed", config: configFrom({ smoosh: { ...base, wait_secs: "0", db_channels: "big_dbs" } }) });
    expect(activeJobs(sim.state).length + sim.outstanding.filter((o) => o.kind === "fetch").length).toBeGreaterThan(0);
    expect(sim.state.jobs.size).toBe(1);
    sim.send({ type: "config-changed", config: configFrom({ smoosh: { ...base, wait_secs: "0", db_channels: "ratio_dbs" } }) });
    sim.send({ type: "object-updated", object: { kind: "db", db: "z" }, force: true });
    while (sim.outstanding.some((o) => o.kind === "fetch")) sim.answer(sim.outstanding.findIndex((o) => o.kind === "fetch"), true);
    expect(smooshStatus(sim.state).channels["ratio_dbs"]).toMatchObject({ waiting: { size: 1 } });
    expect(sim.state.jobs.size).toBe(1);
  });

  it("persist: checkpoints on schedule, running objects saved at infinity and restored first", () => {
    const ini = { smoosh: { ...base, wait_secs: "0", persist: "true", checkpoint_secs: "60" } };
    const sizes: Record<string, number> = { a: 5, b: 3, c: 8 };
    const infoOf = (o: CompactionObject): ObjectInfo => bigDb({ fileBytes: (sizes[o.db] ?? 1) * 10 * 1024 ** 2 });
    const sim = new Sim(configFrom(ini), infoOf, [], () => [], T0);
    for (const db of ["a", "b", "c"]) {
      sim.send({ type: "object-updated", object: { kind: "db", db } });
      sim.answer(0, true);
    }
    sim.answer(0, true); // precheck a -> start
    sim.answer(0, true); // a started
    sim.advance(60_000);
    const persisted = sim.effectsOf("persist");
    expect(persisted).toHaveLength(1);
    const snapshot = persisted[0]!.snapshot;
    expect(snapshot.channels["ratio_dbs"]?.map((i) => [i.object.db, i.priority])).toEqual([["a", Infinity], ["c", 8], ["b", 3]]);
    const json = JSON.parse(JSON.stringify(SmooshSnapshotC.encode(snapshot)));
    const decoded = SmooshSnapshotC.decode(json);
    if (decoded._tag === "Left") throw new Error("snapshot does not decode");
    const fresh = new Sim(configFrom({ smoosh: { ...base, wait_secs: "0" } }), infoOf, [], () => [], T0 + 120_000);
    fresh.send({ type: "state-restored", snapshot: decoded.right });
    fresh.answer(0, true);
    expect(fresh.starts.map((s) => s.object.db)).toEqual(["a"]);
  });
});
