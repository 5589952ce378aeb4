/**
 * The store side of a staged deploy (src/core/indexing/deploy.ts), through
 * the document port, each step idempotent so a resumed deploy can redo it:
 *
 * - stage: write the body at the stage id, marked `upholster_stage: {of}`
 *   (a doc at that id without our mark is someone else's: conflict); read
 *   the live rev;
 * - check: the stage's indexes, as the backends see them, and their lag;
 * - swap: write the body over the live design doc if it is still at the
 *   rev read when staging (already equal: done; else conflict);
 * - remove the stage (only if it carries our mark).
 */
import { sameBody, type DeployEffect, type IndexingEvent, type ListedDesignDoc } from "../../core/indexing/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { CompactionStore, DocumentStore, StoredDoc } from "../../ports/store.js";
import { isTransient } from "./errors.js";
import type { BackendRegistry } from "./registry.js";

export type DeployStore = Pick<DocumentStore, "getDoc" | "bulkDocs"> & Pick<CompactionStore, "dbInfo">;

export interface DeployDeps {
  readonly store: DeployStore;
  readonly registry: BackendRegistry;
}

export const STAGE_MARK = "upholster_stage";

class StepConflict extends Error {
  readonly transient = false;
}

/** The body without `_id`, `_rev` and our mark: what is compared and swapped in. */
export const bodyOf = (doc: StoredDoc): Record<string, unknown> => {
  const { _id: _i, _rev: _r, [STAGE_MARK]: _m, ...body } = doc;
  return body;
};

const markOf = (doc: StoredDoc): string | undefined => {
  const mark = doc[STAGE_MARK];
  return typeof mark === "object" && mark !== null && typeof (mark as { of?: unknown }).of === "string" ? (mark as { of: string }).of : undefined;
};

const write = async (store: DeployStore, db: string, doc: Record<string, unknown> & { _id: string }): Promise<void> => {
  const [result] = await store.bulkDocs(db, [doc]);
  if (result === undefined) throw new Error(`no answer writing ${doc._id}`);
  if (!result.ok) {
    // A conflict on a write we prepared from a fresh read: someone wrote meanwhile; read again and retry.
    throw Object.assign(new Error(`writing ${doc._id}: ${result.error}${result.reason === undefined ? "" : ` (${result.reason})`}`), { transient: result.error === "conflict" });
  }
};

type Step<E extends DeployEffect["type"]> = (deps: DeployDeps, effect: Extract<DeployEffect, { type: E }>) => Promise<IndexingEvent>;

const stage: Step<"deploy-stage"> = async ({ store }, effect) => {
  const live = await store.getDoc(effect.db, effect.ddoc);
  const existing = await store.getDoc(effect.db, effect.stageId);
  if (existing !== undefined && markOf(existing) !== effect.ddoc) {
    throw new StepConflict(`${effect.stageId} exists and is not a stage of ${effect.ddoc}; remove or rename it`);
  }
  if (existing === undefined || !sameBody(bodyOf(existing), effect.body)) {
    await write(store, effect.db, { ...effect.body, _id: effect.stageId, ...(existing !== undefined ? { _rev: existing._rev } : {}), [STAGE_MARK]: { of: effect.ddoc } });
  }
  const info = await store.dbInfo(effect.db);
  if (info === undefined) throw new StepConflict("the database is gone");
  return { type: "deploy-staged", deployId: effect.deployId, liveRev: live?._rev ?? null, stagedSeq: info.updateSeqNumber };
};

const check: Step<"deploy-check"> = async ({ store, registry }, effect) => {
  await registry.ready();
  const staged = await store.getDoc(effect.db, effect.stageId);
  if (staged === undefined) throw new StepConflict(`the stage ${effect.stageId} was removed`);
  const info = await store.dbInfo(effect.db);
  if (info === undefined) throw new StepConflict("the database is gone");
  const designDocs: ListedDesignDoc[] = [{ id: effect.stageId, body: bodyOf(staged) }];
  let lag = 0;
  let indexes = 0;
  let minIndexSeq: number | undefined;
  for (const backend of registry.all()) {
    for (const spec of backend.indexesOf(effect.db, designDocs).indexes) {
      indexes += 1;
      const progress = await backend.progress(effect.db, spec);
      // A backend that cannot tell (PouchDB Server's views) is asked to build: its build waits for the index.
      const indexSeq = progress?.indexSeq ?? (await backend.build(effect.db, spec, { targetSeq: info.updateSeqNumber, signal: new AbortController().signal })).indexSeq;
      lag = Math.max(lag, info.updateSeqNumber - indexSeq);
      minIndexSeq = Math.min(minIndexSeq ?? indexSeq, indexSeq);
    }
  }
  return { type: "deploy-checked", deployId: effect.deployId, lag, minIndexSeq, indexes };
};

const swap: Step<"deploy-swap"> = async ({ store }, effect) => {
  const live = await store.getDoc(effect.db, effect.ddoc);
  if (live !== undefined && sameBody(bodyOf(live), effect.body)) return { type: "deploy-swapped", deployId: effect.deployId };
  if ((live?._rev ?? null) !== effect.liveRev) throw new StepConflict(`${effect.ddoc} changed during the deploy (now at ${live?._rev ?? "deleted"})`);
  await write(store, effect.db, { ...effect.body, _id: effect.ddoc, ...(live !== undefined ? { _rev: live._rev } : {}) });
  return { type: "deploy-swapped", deployId: effect.deployId };
};

const removeStage: Step<"deploy-remove-stage"> = async ({ store }, effect) => {
  const staged = await store.getDoc(effect.db, effect.stageId);
  if (staged !== undefined && markOf(staged) !== undefined) await write(store, effect.db, { _id: effect.stageId, _rev: staged._rev, _deleted: true });
  return { type: "deploy-stage-removed", deployId: effect.deployId };
};

/** Carry out one deploy step; a failure is an event too (transient or not, conflict or not). */
export async function runDeployStep(deps: DeployDeps, effect: DeployEffect): Promise<IndexingEvent> {
  try {
    switch (effect.type) {
      case "deploy-stage":
        return await stage(deps, effect);
      case "deploy-check":
        return await check(deps, effect);
      case "deploy-swap":
        return await swap(deps, effect);
      case "deploy-remove-stage":
        return await removeStage(deps, effect);
    }
  } catch (error) {
    return { type: "deploy-step-failed", deployId: effect.deployId, error: errorText(error), transient: isTransient(error), conflict: error instanceof StepConflict };
  }
}
