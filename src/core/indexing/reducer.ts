/**
 * The background indexer as a reducer: `step(state, event, nowMs) -> { state, effects }`.
 *
 * Each step handles its event, then runs the same pipeline: pending dbs
 * swept into the queue when due, due retries queued, ken's job table
 * pruned, queued dbs inspected while there is room, waiting indexes started
 * while the channels allow (upholster's catch-up), deploys moved on, and
 * one `schedule-tick` when the next wake-up time changed. The rules live in
 * the files named after them; this file only routes.
 */
import { fireDueRetries, enqueueDb, pumpInspections } from "./db-queue.js";
import { nextDeployWakeMs, onDeployEvent, pumpDeploys, failDeploysOf, checkDeploysSoon } from "./deploy.js";
import { forgetDb, onCleanupDone, onDbInspected, onDbMissing, onInspectFailed } from "./inspection.js";
import { endOrphan, isFresh, maybePrune, nextPruneWakeMs, onBuildFailed, onBuildFinished } from "./jobs.js";
import { nextSweepAtMs, notePending, sweepPending } from "./pending.js";
import { nextCandidateWakeMs, pumpBuilds } from "./starts.js";
import { ddocKeyOf, emit, initialState, log, update, type Draft, type IndexingState, type Step } from "./state.js";
import type { IndexingConfig } from "./config.js";
import type { DbName, DesignDocId, IndexingEvent } from "./types.js";

export type { IndexingState, Step } from "./state.js";

/** The earliest future time something is due. */
const nextWakeMs = (d: Draft): number | undefined => {
  const times = [
    nextSweepAtMs(d.state),
    d.state.dbRetries.earliest()?.atMs,
    nextPruneWakeMs(d),
    nextCandidateWakeMs(d),
    nextDeployWakeMs(d.state),
  ].filter((t): t is number => t !== undefined);
  if (times.length === 0) return undefined;
  return Math.max(d.nowMs + 1, Math.min(...times));
};

/**
 * Ask for a tick when the wanted time differs from the timer the shell
 * holds (only the latest request counts; after a `tick` it holds none).
 */
const scheduleTick = (d: Draft): void => {
  const atMs = nextWakeMs(d);
  if (atMs === undefined || atMs === d.state.scheduledTickAtMs) return;
  update(d, { scheduledTickAtMs: atMs });
  emit(d, { type: "schedule-tick", atMs });
};

const afterEvent = (d: Draft): Step => {
  sweepPending(d);
  fireDueRetries(d);
  maybePrune(d);
  pumpInspections(d);
  pumpBuilds(d);
  pumpDeploys(d);
  scheduleTick(d);
  return { state: d.state, effects: d.effects };
};

/** A fresh core. `seed` seeds its PRNG (sweep jitter, design doc order): the shell draws it. */
export const initIndexing = (config: IndexingConfig, nowMs: number, seed: number): Step => {
  const d: Draft = { state: initialState(config, nowMs, seed), nowMs, effects: [] };
  log(d, "info", "ken: started", {
    enabled: config.enabled,
    catchUp: config.catchUp,
    batchChannels: config.batchChannels,
    incrementalChannels: config.incrementalChannels,
    delayMs: config.delayMs,
  });
  if (config.batchChannels === 0 && config.incrementalChannels > 0) {
    log(d, "warn", "ken: batch_channels = 0: an index more than max_incremental_updates behind is never built in the background", {
      maxIncrementalUpdates: config.maxIncrementalUpdates,
    });
  }
  return afterEvent(d);
};

const noteQuery = (d: Draft, db: DbName, ddoc: DesignDocId): void => {
  update(d, { queried: d.state.queried.set(ddocKeyOf(db, ddoc), d.nowMs, true).truncate(d.state.config.maxWaitingIndexes) });
  // A query of an index not known to be fresh: look at the db (after the usual delay).
  const keys = d.state.dbIndexes.get(db);
  const stale = keys === undefined || keys.some((key) => {
    const known = d.state.known.get(key);
    return known === undefined || (known.spec.ddocs.includes(ddoc) && !isFresh(known));
  });
  if (stale) notePending(d, db);
};

const applyConfig = (d: Draft, config: IndexingConfig): void => {
  update(d, { config, ignored: new Set(config.ignoredDbs), languages: new Set(config.allowedLanguages), queue: d.state.queue.withLimit(config.maxQueuedDbs) });
  for (const db of config.ignoredDbs) {
    update(d, { pending: d.state.pending.delete(db), queue: d.state.queue.delete(db) });
    for (const key of d.state.dbIndexes.get(db) ?? []) update(d, { waiting: d.state.waiting.delete(key) });
  }
  log(d, "info", "ken: configuration changed", { enabled: config.enabled, catchUp: config.catchUp });
};

const handle = (d: Draft, event: IndexingEvent): void => {
  switch (event.type) {
    case "db-updated":
      // A db whose last inspection found no design docs cannot have an index to
      // bring up to date: a new design doc comes as ddoc-updated (queued at once).
      // Over HTTP this spares two requests per write to every db without views.
      if (d.state.designDocs.get(event.db)?.length === 0) return;
      return notePending(d, event.db);
    case "db-deleted":
      failDeploysOf(d, event.db);
      return forgetDb(d, event.db);
    case "ddoc-updated":
      // ken adds the db at once (every shard), and its old index files are now stale.
      update(d, { cleanupDue: new Set([...d.state.cleanupDue, event.db]) });
      return enqueueDb(d, event.db);
    case "enqueue":
      return enqueueDb(d, event.db);
    case "index-queried":
      return noteQuery(d, event.db, event.ddoc);
    case "prioritize":
      update(d, { hints: d.state.hints.set(ddocKeyOf(event.db, event.ddoc ?? ""), d.nowMs) });
      log(d, "info", "ken: prioritized", { db: event.db, ddoc: event.ddoc ?? null });
      return enqueueDb(d, event.db);
    case "db-inspected":
      return onDbInspected(d, event);
    case "db-missing":
      return onDbMissing(d, event.requestId, event.db);
    case "inspect-failed":
      return onInspectFailed(d, event.requestId, event.db, event.error, event.transient);
    case "build-finished":
    case "build-failed": {
      const job = d.state.running.get(event.jobId);
      if (job === undefined) return;
      if (!(d.state.dbIndexes.get(job.db)?.includes(job.key) ?? false)) return endOrphan(d, job); // its db or index is gone
      if (event.type === "build-finished") onBuildFinished(d, job, event.indexSeq, event.dbSeq);
      else onBuildFailed(d, job, event.error, event.transient);
      return checkDeploysSoon(d, job.db, job.spec.ddocs);
    }
    case "cleanup-done":
      return onCleanupDone(d, event.requestId, event.db, event.error);
    case "tick":
      // The shell's timer fired, so it holds none now: forget the time asked
      // for, or an early tick would leave the core waiting for a wake-up that
      // never comes (issue #7's stall).
      return update(d, { scheduledTickAtMs: undefined });
    case "config-changed":
      return applyConfig(d, event.config);
    default:
      return onDeployEvent(d, event);
  }
};

export const step = (state: IndexingState, event: IndexingEvent, nowMs: number): Step => {
  const d: Draft = { state, nowMs, effects: [] };
  handle(d, event);
  return afterEvent(d);
};
