/** The staged deploy's state machine, driven through `step` with the answers a store would give. */
import { describe, expect, it } from "vitest";
import { defaultIndexingConfig, deployIdOf, initIndexing, step, type IndexingEffect, type IndexingEvent, type IndexingState } from "../../../src/core/indexing/index.js";

const BODY = { views: { v: { map: "function (doc) { emit(doc.n); }" } } };

class Driver {
  state: IndexingState;
  nowMs = 0;
  effects: IndexingEffect[] = [];
  constructor() {
    this.state = initIndexing({ ...defaultIndexingConfig, deployCheckMs: 1000, deployMaxLag: 10 }, 0, 1).state;
  }
  send(event: IndexingEvent, atMs = this.nowMs): IndexingEffect[] {
    this.nowMs = atMs;
    const result = step(this.state, event, atMs);
    this.state = result.state;
    this.effects.push(...result.effects);
    return [...result.effects];
  }
  of<T extends IndexingEffect["type"]>(effects: readonly IndexingEffect[], type: T): Extract<IndexingEffect, { type: T }>[] {
    return effects.filter((e): e is Extract<IndexingEffect, { type: T }> => e.type === type);
  }
  deploy() {
    return this.state.deploys.get(deployIdOf("db", "_design/app"));
  }
}

describe("staged design doc deploy", () => {
  it("stages, builds until fresh enough, swaps, removes the stage, persisting each phase", () => {
    const d = new Driver();
    const requested = d.send({ type: "deploy-requested", db: "db", ddoc: "_design/app", body: BODY });
    expect(d.of(requested, "deploy-stage")).toEqual([
      { type: "deploy-stage", deployId: deployIdOf("db", "_design/app"), db: "db", ddoc: "_design/app", stageId: "_design/app.upholster-stage", body: BODY },
    ]);
    expect(d.of(requested, "persist")).toHaveLength(1);
    const staged = d.send({ type: "deploy-staged", deployId: deployIdOf("db", "_design/app"), liveRev: "1-abc", stagedSeq: 100 });
    expect(d.deploy()?.phase).toBe("building");
    expect(d.of(staged, "inspect-db")).toEqual([expect.objectContaining({ db: "db" })]);
    const firstCheck = d.send({ type: "tick" }, 1000);
    expect(d.of(firstCheck, "deploy-check")).toHaveLength(1);
    d.send({ type: "deploy-checked", deployId: deployIdOf("db", "_design/app"), lag: 5000, minIndexSeq: 10, indexes: 1 }, 1001);
    expect(d.deploy()).toMatchObject({ phase: "building", lag: 5000 });
    const again = d.send({ type: "tick" }, 2001);
    expect(d.of(again, "deploy-check")).toHaveLength(1);
    // Close enough to the db now, but not yet where the db was when staged: not swapped.
    d.send({ type: "deploy-checked", deployId: deployIdOf("db", "_design/app"), lag: 3, minIndexSeq: 99, indexes: 1 }, 2002);
    expect(d.deploy()?.phase).toBe("building");
    d.send({ type: "tick" }, 3002);
    const fresh = d.send({ type: "deploy-checked", deployId: deployIdOf("db", "_design/app"), lag: 3, minIndexSeq: 100, indexes: 1 }, 3003);
    expect(d.of(fresh, "deploy-swap")).toEqual([expect.objectContaining({ ddoc: "_design/app", liveRev: "1-abc", body: BODY })]);
    const swapped = d.send({ type: "deploy-swapped", deployId: deployIdOf("db", "_design/app") });
    expect(d.of(swapped, "deploy-remove-stage")).toEqual([expect.objectContaining({ stageId: "_design/app.upholster-stage" })]);
    const removed = d.send({ type: "deploy-stage-removed", deployId: deployIdOf("db", "_design/app") });
    expect(d.deploy()?.phase).toBe("done");
    expect(d.state.metrics.deploysDone).toBe(1);
    // The old version's index is stale now: the db is looked at again (once its inspection in flight ends), then cleaned.
    expect(d.state.cleanupDue.has("db")).toBe(true);
    expect(d.state.again.has("db") || d.state.queue.has("db")).toBe(true);
    expect(d.of(removed, "persist").at(-1)?.deploys).toEqual([expect.objectContaining({ phase: "done" })]);
  });

  it("a conflict on the swap fails the deploy and removes the stage; transient failures are retried", () => {
    const d = new Driver();
    d.send({ type: "deploy-requested", db: "db", ddoc: "_design/app", body: BODY });
    d.send({ type: "deploy-step-failed", deployId: deployIdOf("db", "_design/app"), error: "timeout", transient: true });
    expect(d.deploy()).toMatchObject({ phase: "staging", attempts: 1, inFlight: false });
    const retried = d.send({ type: "tick" }, 5000);
    expect(d.of(retried, "deploy-stage")).toHaveLength(1);
    d.send({ type: "deploy-staged", deployId: deployIdOf("db", "_design/app"), liveRev: null, stagedSeq: 5 });
    // An answer nobody asked for is ignored; the check comes after deploy_check_msec.
    d.send({ type: "deploy-checked", deployId: deployIdOf("db", "_design/app"), lag: 0, minIndexSeq: 5, indexes: 1 });
    expect(d.deploy()?.phase).toBe("building");
    d.send({ type: "tick" }, 6000);
    d.send({ type: "deploy-checked", deployId: deployIdOf("db", "_design/app"), lag: 0, minIndexSeq: 5, indexes: 1 });
    const conflict = d.send({ type: "deploy-step-failed", deployId: deployIdOf("db", "_design/app"), error: "changed", transient: false, conflict: true });
    expect(d.deploy()).toMatchObject({ phase: "removing-stage", ending: "failed", error: "changed" });
    expect(d.of(conflict, "deploy-remove-stage")).toHaveLength(1);
    d.send({ type: "deploy-stage-removed", deployId: deployIdOf("db", "_design/app") });
    expect(d.deploy()?.phase).toBe("failed");
  });

  it("the same request again is the same deploy; another body is refused while one is in progress; cancel removes the stage", () => {
    const d = new Driver();
    d.send({ type: "deploy-requested", db: "db", ddoc: "_design/app", body: BODY });
    const same = d.send({ type: "deploy-requested", db: "db", ddoc: "_design/app", body: { ...BODY } });
    expect(d.of(same, "deploy-stage")).toHaveLength(0);
    const other = d.send({ type: "deploy-requested", db: "db", ddoc: "_design/app", body: { views: {} } });
    expect(d.of(other, "log").map((l) => l.msg)).toContain("ken: deploy refused");
    d.send({ type: "deploy-staged", deployId: deployIdOf("db", "_design/app"), liveRev: null, stagedSeq: 1 });
    const cancelled = d.send({ type: "deploy-cancel", db: "db", ddoc: "_design/app" });
    expect(d.of(cancelled, "deploy-remove-stage")).toHaveLength(1);
    d.send({ type: "deploy-stage-removed", deployId: deployIdOf("db", "_design/app") });
    expect(d.deploy()?.phase).toBe("cancelled");
  });

  it("a restart resumes a deploy where it was", () => {
    const d = new Driver();
    const record = {
      db: "db",
      ddoc: "_design/app",
      stageId: "_design/app.upholster-stage",
      body: BODY,
      phase: "swapping" as const,
      liveRev: "2-x",
      requestedAtMs: 0,
      updatedAtMs: 0,
      attempts: 0,
    };
    const restored = d.send({ type: "deploys-restored", deploys: [record] });
    expect(d.of(restored, "deploy-swap")).toEqual([expect.objectContaining({ liveRev: "2-x" })]);
  });
});
