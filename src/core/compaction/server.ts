/**
 * smoosh as a reducer: `step(state, event, nowMs) -> { state, effects }`.
 *
 * Each step handles its event, then runs the same pipeline: due retries,
 * rescans and checkpoints; waiting checks and listings into free slots; free
 * channel slots filled from the queues; running jobs suspended or resumed as
 * they should be; and one `schedule-tick` when the next wake-up time changed.
 * The rules live in the files named after them; this file only routes.
 */
import { configuredChannels, type SmooshConfig } from "./config.js";
import { channelStatus, createChannel } from "./channel.js";
import { fullBudget } from "./check-budget.js";
import { emptyCheckQueues } from "./check-queues.js";
import { flushChecks, forceCheck, noteUpdates, onChecksAnswered, pumpBackgroundChecks, pumpDueChecks, pumpForcedChecks, rideAlong } from "./checks.js";
import { maybeCheckpoint, maybeRescan, scheduleTick } from "./housekeeping.js";
import { forgetReads, lookAtRunningJobs, rememberReads, settleAhead } from "./job-looks.js";
import { noteDbCreated, noteDesignDocWritten, onDbsListed, onDesignDocsListed, onListingDone, pumpListings, pumpRescanListings } from "./listings.js";
import {
  fireDueRetries,
  onJobFailed,
  onJobFinished,
  onJobStarted,
  onPrecheckAnswered,
  reconcileSuspensions,
  startWhatCan,
} from "./jobs.js";
import { cleanupOf } from "./object.js";
import { BoundedFifo, PMap, TimedKeys } from "../shared/persistent.js";
import { restoreSnapshot, takeSnapshot } from "./persistence.js";
import { emptyQueue } from "./queue.js";
import { dropDb, applyConfig } from "./reconfigure.js";
import type { SmooshSnapshot } from "./snapshot.js";
import { draftOf, emit, log, setChannel, update, zeroMetrics, type ChannelState, type Draft, type SmooshState, type Step } from "./state.js";
import type { CompactionObject, InfoAnswer, ObjectInfo, SmooshEvent, SmooshMetrics, SmooshStatus } from "./types.js";

export type { SmooshState, Step } from "./state.js";

const afterEvent = (d: Draft): Step => {
  fireDueRetries(d);
  maybeRescan(d);
  maybeCheckpoint(d);
  // Requests, most urgent first: forced work at once; then what the budget allows,
  // due checks before rescans (listings, then background checks).
  pumpForcedChecks(d);
  pumpListings(d);
  pumpDueChecks(d);
  pumpRescanListings(d);
  pumpBackgroundChecks(d);
  startWhatCan(d);
  lookAtRunningJobs(d);
  rideAlong(d);
  reconcileSuspensions(d);
  scheduleTick(d);
  return { state: d.state, effects: d.effects };
};

/** A fresh core: every channel paused for `wait_secs`; the first rescan when they unpause. */
export const initSmoosh = (config: SmooshConfig, nowMs: number): Step => {
  const channels = new Map<string, ChannelState>();
  for (const channel of configuredChannels(config)) {
    channels.set(channel.name, createChannel(channel, nowMs, config.waitSecs));
  }
  const state: SmooshState = {
    config,
    ignored: new Set(config.ignoredDbs),
    channels,
    jobs: new Map(),
    runningKeys: new Map(),
    fetches: new Map(),
    fetchingKeys: new Map(),
    batchesInFlight: new Map(),
    recheckKeys: new Set(),
    aheadFetches: new Map(),
    recentReads: new Map(),
    readsFromId: 1,
    watches: PMap.empty(),
    checks: emptyCheckQueues(config.maxPendingChecks),
    budget: fullBudget(config.checkRequestsPerSec, nowMs),
    dueTokensInARow: 0,
    pendingListings: BoundedFifo.empty(config.maxPendingChecks),
    listingsInFlight: new Map(),
    rescanListings: BoundedFifo.empty(config.maxPendingChecks),
    ddocCounts: PMap.empty(),
    retries: TimedKeys.empty(),
    failures: PMap.empty(),
    suspended: false,
    nextId: 1,
    metrics: zeroMetrics,
    nextRescanAtMs: config.rescanIntervalSecs > 0 ? nowMs + config.waitSecs * 1000 : undefined,
    nextCheckpointAtMs: config.persist ? nowMs + config.checkpointSecs * 1000 : undefined,
    scheduledTickAtMs: undefined,
  };
  const d = draftOf(state, nowMs);
  log(d, "info", "smoosh: started", { channels: [...channels.keys()], waitSecs: config.waitSecs });
  return afterEvent(d);
};

const handle = (d: Draft, event: SmooshEvent): void => {
  switch (event.type) {
    case "object-updated":
      if (event.force === true) forceCheck(d, event.object);
      else noteUpdates(d, event.object, event.count ?? 1);
      return;
    case "objects-updated":
      for (const { object, count } of event.updates) noteUpdates(d, object, count);
      return;
    case "db-created":
      // Usually empty (priority 0, one cheap check), but not always: a feed that
      // polls, or a restart, can first see a db that was created and filled meanwhile.
      noteUpdates(d, { kind: "db", db: event.db }, 1);
      noteDbCreated(d, event.db);
      return;
    case "db-deleted":
      dropDb(d, event.db);
      return;
    case "design-doc-updated":
      // index_cleanup: a changed design doc may leave old index files behind.
      noteDesignDocWritten(d, event.db);
      noteUpdates(d, cleanupOf(event.db), 1);
      noteUpdates(d, { kind: "view", db: event.db, ddoc: event.ddoc }, 1);
      return;
    case "info-fetched":
      answerInfos(d, [event]);
      return;
    case "info-failed":
      answerInfos(d, [event]);
      return;
    case "infos-fetched":
      answerInfos(d, event.answers);
      return;
    case "job-started":
    case "job-start-failed":
    case "job-finished":
    case "job-failed": {
      const job = d.state.jobs.get(event.jobId);
      if (job === undefined || job.phase === "precheck") {
        log(d, "debug", "smoosh: event for an unknown job, ignored", { type: event.type, jobId: event.jobId });
        return;
      }
      if (event.type === "job-started") onJobStarted(d, job);
      else if (event.type === "job-finished") onJobFinished(d, job, event.reclaimedBytes);
      else onJobFailed(d, job, event.error, event.type === "job-start-failed");
      return;
    }
    case "dbs-listed":
      onDbsListed(d, event.purpose, event.dbs);
      return;
    case "design-docs-listed":
      onDesignDocsListed(d, event.purpose, event.db, event.ddocs, event.geoSignatures ?? []);
      return;
    case "list-failed":
      if (event.db !== undefined) onListingDone(d, event.db, event.purpose);
      log(d, "warn", "smoosh: listing failed", { purpose: event.purpose, db: event.db ?? null, error: event.error });
      return;
    case "events-missed":
      // Writes during the gap went unheard: a rescan (background checks, budgeted) finds what grew.
      emit(d, { type: "list-dbs", purpose: "rescan" });
      log(d, "info", "smoosh: events may have been missed; rescanning", {});
      return;
    case "tick":
      // The shell's timer has fired, so it holds none now. Forget the time we
      // asked for: a tick may come early or late by the clock we are given
      // (Node's timers fire up to 1 ms before the wall clock reaches the time), and
      // a core that waited for the wake-up time to *change* before asking
      // again would never be woken for something still due (issue #7: channels
      // stayed paused forever after an early tick on a busy machine).
      update(d, { scheduledTickAtMs: undefined });
      return;
    case "config-changed":
      applyConfig(d, event.config);
      return;
    case "suspend":
      update(d, { suspended: true });
      forgetReads(d);
      log(d, "info", "smoosh: suspended", {});
      return;
    case "resume":
      update(d, { suspended: false });
      forgetReads(d);
      log(d, "info", "smoosh: resumed", {});
      return;
    case "flush":
      for (const [name, channel] of d.state.channels) setChannel(d, name, { ...channel, queue: emptyQueue() });
      flushChecks(d);
      log(d, "info", "smoosh: flushed every queue", {});
      return;
    case "enqueue-all":
      d.effects.push({ type: "list-dbs", purpose: event.scope === "dbs" ? "enqueue-all-dbs" : "enqueue-all-views" });
      return;
    case "state-restored":
      restoreSnapshot(d, event.snapshot);
      return;
  }
};

/**
 * Prechecks go to their jobs; checks are settled together (one copy of the
 * in-flight maps a batch). The batch's db reads are remembered first (for a
 * store the core looks at jobs for): a start they lead to may stand on them.
 */
const answerInfos = (d: Draft, answers: readonly InfoAnswer[]): void => {
  rememberReads(d, answers);
  const checks: { requestId: number; info: ObjectInfo | "missing" | { error: string } }[] = [];
  for (const answer of answers) {
    const info = "error" in answer ? { error: answer.error } : answer.info;
    if (settleAhead(d, answer.requestId)) continue;
    const job = d.state.jobs.get(answer.requestId);
    if (job !== undefined) onPrecheckAnswered(d, job, info);
    else checks.push({ requestId: answer.requestId, info });
  }
  if (checks.length > 0) onChecksAnswered(d, checks);
};

export const step = (state: SmooshState, event: SmooshEvent, nowMs: number): Step => {
  const d = draftOf(state, nowMs);
  handle(d, event);
  return afterEvent(d);
};

/** CouchDB 3.4's `/_smoosh/status` body, one entry per configured channel. */
export const smooshStatus = (state: SmooshState): SmooshStatus => {
  const channels: Record<string, ReturnType<typeof channelStatus>> = {};
  for (const [name, channel] of state.channels) channels[name] = channelStatus(state, channel);
  return { channels };
};

export const smooshMetrics = (state: SmooshState): SmooshMetrics => state.metrics;

/** Jobs the store knows about (start-job emitted), for the shell and status. */
export const activeJobs = (
  state: SmooshState,
): ReadonlyArray<{ jobId: number; channel: string; object: CompactionObject; adopted: boolean }> =>
  [...state.jobs.values()]
    .filter((job) => job.phase !== "precheck")
    .map(({ jobId, channel, object, adopted }) => ({ jobId, channel, object, adopted }));

/** A snapshot on demand (e.g. at shutdown); the periodic one comes as a `persist` effect. */
export const smooshSnapshot = (state: SmooshState, nowMs: number): SmooshSnapshot => takeSnapshot(state, nowMs);

