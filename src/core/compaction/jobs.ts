/**
 * Jobs: taking the best item of a channel when it has room, re-checking its
 * priority just before the start, the job's life (started, finished, failed),
 * retries with back-off, and keeping running jobs suspended exactly when they
 * should be (global suspend, or a strict window that is closed).
 */
import { backoffDelayMs, shouldGiveUp } from "./backoff.js";
import { channelHasRoom, channelOpen, placeInChannel } from "./channel.js";
import { forceCheck, freshInfo, onCompacted, rescheduleKeys } from "./checks.js";
import { firstLookAtMs, takeRecentRead } from "./job-looks.js";
import { cleanupOf, describeObject } from "./object.js";
import { channelPriority } from "./priority.js";
import { queueOut } from "./queue.js";
import { bump, emit, isIgnored, log, setChannel, takeId, update, type Draft, type Job } from "./state.js";
import type { ObjectInfo } from "./types.js";
import { inWindow } from "./window.js";

const putJob = (d: Draft, job: Job): void => {
  const jobs = new Map(d.state.jobs);
  jobs.set(job.jobId, job);
  const runningKeys = new Map(d.state.runningKeys);
  runningKeys.set(job.key, job.jobId);
  update(d, { jobs, runningKeys });
};

const dropJob = (d: Draft, job: Job): void => {
  const jobs = new Map(d.state.jobs);
  jobs.delete(job.jobId);
  const runningKeys = new Map(d.state.runningKeys);
  if (runningKeys.get(job.key) === job.jobId) runningKeys.delete(job.key);
  update(d, { jobs, runningKeys });
};

const jobFields = (job: Job): Record<string, unknown> => ({
  jobId: job.jobId,
  channel: job.channel,
  object: describeObject(job.object),
});

/** Fill every open channel's free slots from its queue, best first. */
export const startWhatCan = (d: Draft): void => {
  for (const name of d.state.channels.keys()) {
    for (;;) {
      const channel = d.state.channels.get(name);
      if (channel === undefined) break;
      if (!channelOpen(d.state, channel, d.nowMs) || !channelHasRoom(d.state, channel)) break;
      const best = queueOut(channel.queue);
      if (best === undefined) break;
      setChannel(d, name, { ...channel, queue: best.queue });
      // Guards: neither is normally queued, but a restored snapshot or a config change can leave one.
      if (d.state.runningKeys.has(best.key) || isIgnored(d.state, best.value)) {
        rescheduleKeys(d, [best.key]);
        continue;
      }
      const jobId = takeId(d);
      putJob(d, {
        jobId,
        channel: name,
        object: best.value,
        key: best.key,
        priority: best.priority,
        phase: "precheck",
        adopted: false,
        suspended: false,
      });
      // The queued priority may be minutes old: re-check just before starting (as CouchDB 3.x),
      // unless the check that queued it was just now, or (a store the core looks at jobs
      // for) a read of the last interval (job-looks.ts): one request saved per start.
      const fresh = freshInfo(d, best.key) ?? takeRecentRead(d, best.key);
      if (fresh !== undefined) onPrecheckAnswered(d, d.state.jobs.get(jobId)!, fresh);
      else emit(d, { type: "fetch-info", requestId: jobId, object: best.value, purpose: "precheck" });
    }
  }
};

/** Schedule a re-check after the back-off, or give up. */
const retryLater = (d: Draft, job: Job, reason: string): void => {
  const attempt = (d.state.failures.get(job.key) ?? 0) + 1;
  if (shouldGiveUp(d.state.config, attempt)) {
    bump(d, "gaveUp");
    update(d, { failures: d.state.failures.delete(job.key) });
    log(d, "error", "smoosh: giving up after repeated failures", { ...jobFields(job), attempts: attempt - 1, reason });
    return;
  }
  const delayMs = backoffDelayMs(d.state.config, attempt);
  update(d, {
    failures: d.state.failures.set(job.key, attempt),
    retries: d.state.retries.set(job.key, d.nowMs + delayMs, { object: job.object, attempt }),
  });
  log(d, "info", "smoosh: will retry", { ...jobFields(job), attempt, delayMs });
};

/** The precheck answer: start, adopt, skip, or put back. */
export const onPrecheckAnswered = (d: Draft, job: Job, info: ObjectInfo | "missing" | { error: string }): void => {
  if (job.phase !== "precheck") return;
  dropJob(d, job);
  settlePrecheck(d, job, info);
  // Started or adopted (held again, left as it is), backing off, put back or let go: its next look follows the policy.
  rescheduleKeys(d, [job.key]);
};

const settlePrecheck = (d: Draft, job: Job, info: ObjectInfo | "missing" | { error: string }): void => {
  if (info === "missing") {
    log(d, "debug", "smoosh: object gone before its start", jobFields(job));
    return;
  }
  if ("error" in info) {
    bump(d, "failed");
    log(d, "warn", "smoosh: could not re-check before the start", { ...jobFields(job), error: info.error });
    retryLater(d, job, info.error);
    return;
  }
  const channel = d.state.channels.get(job.channel);
  if (channel === undefined || isIgnored(d.state, job.object)) {
    log(d, "info", "smoosh: not started: channel removed or db ignored meanwhile", jobFields(job));
    return;
  }
  if (!channelOpen(d.state, channel, d.nowMs)) {
    // Suspended or the window closed while the info was fetched: back in the queue, not started.
    rescheduleKeys(d, placeInChannel(d, job.channel, job.object, job.priority));
    return;
  }
  const priority = channelPriority(channel.config, info);
  if (priority === 0) {
    bump(d, "skippedAtStart");
    log(d, "info", "smoosh: skipped at start, priority fell to 0", jobFields(job));
    return;
  }
  if (info.kind === "geo" && info.compactionRunning) return leaveRunningGeo(d, job);
  // A compaction already running on the store (started by hand, or one that restarted
  // itself to catch up): watch it instead of starting another (CouchDB #3144/#3150).
  const adopt = info.kind !== "cleanup" && info.compactionRunning;
  putJob(d, { ...job, phase: "starting", adopted: adopt, priority });
  emit(d, { type: "start-job", jobId: job.jobId, channel: job.channel, object: job.object, adopt });
};

/**
 * Only upholster compacts geo files, so one already being compacted was
 * started by this process (a daemon restarted meanwhile): there is nothing
 * to adopt and no second job to start; it is looked at again as the policy says.
 */
const leaveRunningGeo = (d: Draft, job: Job): void => {
  bump(d, "skippedAtStart");
  log(d, "info", "smoosh: skipped at start, already being compacted", jobFields(job));
};

export const onJobStarted = (d: Draft, job: Job): void => {
  if (job.phase !== "starting") return;
  putJob(d, { ...job, phase: "active", activeSinceMs: d.nowMs, nextLookAtMs: firstLookAtMs(d, job) });
  bump(d, job.adopted ? "adopted" : "started");
  log(d, "info", job.adopted ? "smoosh: adopted running compaction" : "smoosh: started", {
    ...jobFields(job),
    priority: job.priority,
  });
};

export const onJobFailed = (d: Draft, job: Job, error: string, atStart: boolean): void => {
  dropJob(d, job);
  bump(d, "failed");
  log(d, "warn", atStart ? "smoosh: failed to start" : "smoosh: job failed", { ...jobFields(job), error });
  retryLater(d, job, error);
  // Held by its retry, unless it gave up: then its next look follows the policy.
  rescheduleKeys(d, [job.key]);
};

export const onJobFinished = (d: Draft, job: Job, reclaimedBytes: number | undefined): void => {
  dropJob(d, job);
  bump(d, "finished");
  const reclaimed = reclaimedBytes !== undefined && Number.isFinite(reclaimedBytes) ? Math.max(0, reclaimedBytes) : 0;
  bump(d, "bytesReclaimed", reclaimed);
  update(d, { failures: d.state.failures.delete(job.key) });
  // Its file is about its live data now: the policy predicts the next crossing from there.
  onCompacted(d, job.object);
  log(d, "info", "smoosh: finished", { ...jobFields(job), reclaimedBytes: reclaimedBytes ?? null });
  // cleanup_index_files: after a view compaction, clean up the db's stale index files
  // (CouchDB spawned the cleanup when a view compaction started; after is when it can help).
  if (job.object.kind === "view" && d.state.config.cleanupIndexFiles) {
    forceCheck(d, cleanupOf(job.object.db));
  }
};

/** Due retries become forced checks (the priority may have changed while waiting). */
export const fireDueRetries = (d: Draft): void => {
  const { rest, taken } = d.state.retries.takeUntil(d.nowMs);
  if (taken.length === 0) return;
  update(d, { retries: rest });
  for (const entry of taken) {
    bump(d, "retried");
    forceCheck(d, entry.value.object);
  }
};

/** Whether a running job should be suspended now. */
const shouldBeSuspended = (d: Draft, job: Job): boolean => {
  if (d.state.suspended) return true;
  const channel = d.state.channels.get(job.channel);
  return channel !== undefined && channel.config.strictWindow && !inWindow(channel.config.window, d.nowMs);
};

/** Emit suspend-job / resume-job where a running job's desired state changed. */
export const reconcileSuspensions = (d: Draft): void => {
  for (const job of d.state.jobs.values()) {
    if (job.phase !== "active") continue;
    const suspend = shouldBeSuspended(d, job);
    if (suspend === job.suspended) continue;
    putJob(d, { ...job, suspended: suspend });
    emit(d, { type: suspend ? "suspend-job" : "resume-job", jobId: job.jobId });
    log(d, "info", suspend ? "smoosh: suspended job" : "smoosh: resumed job", jobFields(job));
  }
};

