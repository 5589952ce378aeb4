/**
 * Staged design doc deploys on the memory store: the new version is built
 * under the stage id while the live one keeps answering, swapped in when
 * fresh (its index is reused: no rebuild after the swap), and the stage
 * removed. A restart in the middle resumes it; a live design doc changed
 * meanwhile fails it cleanly.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEPLOYS_STATE_KEY } from "../../../src/runtime/indexing/persistence.js";
import { rig, until, VIEWS, writeDocs, type Rig } from "./helpers.js";

const NEXT = { views: { by_n: { map: "function (doc) { if (doc.n !== undefined) emit(-doc.n, 1); }", reduce: "_sum" } } };

let current: Rig | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

async function withLiveIndex(): Promise<Rig> {
  const r = (current = await rig({ ini: { ken: { deploy_check_msec: "200" } } }));
  r.store.createDb("shop");
  r.store.putDesignDoc("shop", "app", VIEWS);
  writeDocs(r.store, "shop", 500);
  await until(r, async () => (await r.indexing.daemon.lag("shop")).every((l) => l.lag === 0), "the live index built");
  return r;
}

const phase = (r: Rig): string | undefined => r.indexing.daemon.deployStatus("shop", "app")?.phase;

describe("staged design doc deploy", () => {
  it("stages, builds in the background, swaps in when fresh (the index is reused), removes the stage", async () => {
    const r = await withLiveIndex();
    expect(r.indexing.daemon.deploy("shop", "app", NEXT)).toEqual({ ok: true, resumed: false });
    await until(r, () => phase(r) === "done", "the deploy done");
    const live = await r.store.getDoc("shop", "_design/app");
    expect(live).toMatchObject(NEXT);
    expect(await r.store.getDoc("shop", "_design/app.upholster-stage")).toBeUndefined();
    // Swapped in already built: its index is at the db's seq (or at most deploy_max_lag behind).
    const info = await r.store.viewGroupInfo("shop", "_design/app");
    const dbSeq = (await r.store.dbInfo("shop"))!.updateSeqNumber;
    expect(dbSeq - info.view_index.update_seq).toBeLessThanOrEqual(2);
    expect(info.view_index.update_seq).toBeGreaterThan(0);
    expect(r.logger.text()).toMatch(/ken: deploy building[\s\S]*ken: deploy swapping[\s\S]*ken: deploy done/);
  });

  it("a restart in the middle resumes the deploy from its saved phase", async () => {
    const r = await withLiveIndex();
    // The store goes away just after the request: the deploy waits in its first phase, saved.
    r.store.setAvailable(false);
    r.indexing.daemon.deploy("shop", "app", NEXT);
    await until(r, () => r.indexing.daemon.deployStatus("shop", "app")?.error !== undefined, "a failed attempt");
    await r.restart();
    expect(phase(r)).toBe("staging");
    r.store.setAvailable(true);
    expect(r.indexing.daemon.deploy("shop", "app", NEXT)).toEqual({ ok: true, resumed: true });
    await until(r, () => phase(r) === "done", "the resumed deploy done");
    expect(await r.store.getDoc("shop", "_design/app")).toMatchObject(NEXT);
    expect(r.logger.text()).toContain("ken: deploy resumed");
  });

  it("a deploy saved while building (the process died) is carried on by the next one", async () => {
    const r = await withLiveIndex();
    const live = await r.store.getDoc("shop", "_design/app");
    r.store.putDesignDoc("shop", "app.upholster-stage", { ...NEXT, upholster_stage: { of: "_design/app" } });
    const stagedSeq = (await r.store.dbInfo("shop"))!.updateSeqNumber;
    const record = { db: "shop", ddoc: "_design/app", stageId: "_design/app.upholster-stage", body: NEXT, phase: "building", liveRev: live!._rev, stagedSeq, requestedAtMs: 0, updatedAtMs: 0, attempts: 0 };
    await r.state.save(DEPLOYS_STATE_KEY, [record]);
    await r.restart();
    await until(r, () => phase(r) === "done", "the saved deploy done");
    expect(await r.store.getDoc("shop", "_design/app")).toMatchObject(NEXT);
    expect(await r.store.getDoc("shop", "_design/app.upholster-stage")).toBeUndefined();
  });

  it("a live design doc changed during the deploy fails it, and the stage is removed", async () => {
    const r = await withLiveIndex();
    // Someone changes the live design doc the moment the stage is written (after its rev was read).
    const watcher = r.store.createEventSource();
    await watcher.start((event) => {
      if (event.type !== "ddoc-updated" || event.ddoc !== "_design/app.upholster-stage") return;
      void watcher.stop();
      void r.store.getDoc("shop", "_design/app").then((live) => r.store.putDesignDoc("shop", "app", { ...VIEWS, changed: true }, live?._rev));
    });
    r.indexing.daemon.deploy("shop", "app", NEXT);
    await until(r, () => phase(r) === "failed", "the deploy failed");
    expect(r.indexing.daemon.deployStatus("shop", "app")?.error).toMatch(/changed during the deploy/);
    expect(await r.store.getDoc("shop", "_design/app.upholster-stage")).toBeUndefined();
    expect(await r.store.getDoc("shop", "_design/app")).toMatchObject({ changed: true });
  });

  it("refuses another body while one is in progress, and a stage id that is someone else's", async () => {
    const r = await withLiveIndex();
    r.indexing.daemon.deploy("shop", "app", NEXT);
    expect(r.indexing.daemon.deploy("shop", "app", VIEWS)).toEqual({ ok: false, reason: expect.stringMatching(/another body is in progress/) });
    expect(r.indexing.daemon.cancelDeploy("shop", "app")).toBe(true);
    await until(r, () => phase(r) === "cancelled", "cancelled");
    r.store.putDesignDoc("shop", "app.upholster-stage", { mine: true });
    r.indexing.daemon.deploy("shop", "app", NEXT);
    await until(r, () => phase(r) === "failed", "refused by the store step");
    expect(r.indexing.daemon.deployStatus("shop", "app")?.error).toMatch(/not a stage of _design\/app/);
    expect(await r.store.getDoc("shop", "_design/app.upholster-stage")).toMatchObject({ mine: true });
  });
});
