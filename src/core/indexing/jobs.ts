/**
 * ken's job table: per index, the db seq and time of its last start and the
 * build running, if any. Never two builds of one index: a row with a
 * running job refuses every start (should-start.ts). Rows of finished jobs
 * are pruned `delay` after their last start, every `prune_interval` (the
 * index is then a new job again for the start rule).
 */
import { cappedExponentialMs } from "../shared/backoff.js";
import { resubmitDb } from "./db-queue.js";
import { addCandidate } from "./candidates.js";
import { copyMap, count, ddocKeyOf, emit, log, nextId, update, type Candidate, type Draft, type KnownIndex, type RunningJob } from "./state.js";
import type { Channel } from "./types.js";

export const isFresh = (known: Pick<KnownIndex, "indexSeq" | "dbSeq"> | undefined): boolean =>
  known?.indexSeq !== undefined && known.indexSeq >= known.dbSeq;

export const startBuild = (d: Draft, candidate: Candidate, channel: Channel): void => {
  const jobId = nextId(d);
  const row = d.state.jobs.get(candidate.key);
  const job: RunningJob = {
    jobId,
    key: candidate.key,
    db: candidate.db,
    spec: candidate.spec,
    channel,
    targetSeq: candidate.dbSeq,
    startedAtMs: d.nowMs,
    previous: row === undefined ? undefined : { seq: row.seq, lastRunMs: row.lastRunMs },
  };
  update(d, {
    running: copyMap(d.state.running, (m) => m.set(jobId, job)),
    jobs: d.state.jobs.set(candidate.key, { seq: candidate.dbSeq, lastRunMs: d.nowMs, runningJobId: jobId }),
    waiting: d.state.waiting.delete(candidate.key),
  });
  count(d, "buildsStarted");
  emit(d, { type: "build-index", jobId, db: candidate.db, index: candidate.spec, targetSeq: candidate.dbSeq, channel });
  log(d, "debug", "ken: build started", { db: candidate.db, index: candidate.spec.name, type: candidate.spec.type, channel, targetSeq: candidate.dbSeq });
};

const endJob = (d: Draft, job: RunningJob): void => {
  update(d, { running: copyMap(d.state.running, (m) => m.delete(job.jobId)) });
};

/** A build whose db or index is gone meanwhile (cancelled): its channel is free again, nothing to learn. */
export const endOrphan = (d: Draft, job: RunningJob): void => {
  endJob(d, job);
  update(d, { jobs: d.state.jobs.delete(job.key) });
  log(d, "debug", "ken: build of an index that is gone ended", { db: job.db, index: job.spec.name });
};

/** The index reached `indexSeq`; with catch-up, it goes again at once if the db moved on meanwhile. */
export const onBuildFinished = (d: Draft, job: RunningJob, indexSeq: number, reportedDbSeq: number | undefined): void => {
  endJob(d, job);
  const row = d.state.jobs.get(job.key);
  if (row !== undefined) update(d, { jobs: d.state.jobs.set(job.key, { ...row, runningJobId: undefined }) });
  count(d, "buildsFinished");
  const before = d.state.known.get(job.key);
  const known: KnownIndex = {
    key: job.key,
    db: job.db,
    spec: before?.spec ?? job.spec,
    dbSeq: Math.max(before?.dbSeq ?? 0, reportedDbSeq ?? 0, job.targetSeq),
    indexSeq: indexSeq,
    failures: 0,
    lastFailureAtMs: undefined,
    lastError: undefined,
    gaveUp: false,
    lastBuiltAtMs: d.nowMs,
  };
  // A build of an index dropped meanwhile (its design doc changed) teaches nothing to keep.
  if (before !== undefined || d.state.dbIndexes.get(job.db)?.includes(job.key) === true) update(d, { known: d.state.known.set(job.key, known) });
  log(d, "info", "ken: build finished", { db: job.db, index: job.spec.name, type: job.spec.type, indexSeq, lag: Math.max(0, known.dbSeq - indexSeq) });
  if (isFresh(known)) clearHints(d, job);
  else if (d.state.config.catchUp && before !== undefined) {
    count(d, "catchUps");
    // The latest spec: the design docs defining the index may have changed while it was built.
    addCandidate(d, { db: job.db, spec: known.spec, dbSeq: known.dbSeq, indexSeq, notBeforeMs: d.nowMs });
  }
};

/** A failed build covers nothing: its row goes back to before, and it is retried after a back-off. */
export const onBuildFailed = (d: Draft, job: RunningJob, error: string, transient: boolean): void => {
  endJob(d, job);
  update(d, {
    jobs: job.previous === undefined ? d.state.jobs.delete(job.key) : d.state.jobs.set(job.key, { ...job.previous, runningJobId: undefined }),
  });
  count(d, "buildsFailed");
  const before = d.state.known.get(job.key);
  const failures = (before?.failures ?? 0) + 1;
  const { retryInitialMs, retryMaxMs, retryMaxAttempts, catchUp } = d.state.config;
  const gaveUp = !transient && failures > retryMaxAttempts;
  if (before !== undefined) {
    update(d, { known: d.state.known.set(job.key, { ...before, failures, lastFailureAtMs: d.nowMs, lastError: error, gaveUp }) });
  }
  const retryInMs = cappedExponentialMs(retryInitialMs, retryMaxMs, failures - 1);
  log(d, gaveUp ? "error" : "warn", gaveUp ? "ken: build failed; retried when the db changes again" : "ken: build failed; retrying", {
    db: job.db,
    index: job.spec.name,
    type: job.spec.type,
    error,
    transient,
    failures,
    ...(gaveUp ? {} : { retryInMs: catchUp ? retryInMs : d.state.config.resubmitFailedMs }),
  });
  if (!catchUp) resubmitDb(d, job.db, d.state.config.resubmitFailedMs);
  else if (!gaveUp && before !== undefined) addCandidate(d, { db: job.db, spec: before.spec, dbSeq: before.dbSeq, indexSeq: before.indexSeq, notBeforeMs: d.nowMs + retryInMs });
};

/** Operator hints last until the index (or every index of the db) is fresh. */
const clearHints = (d: Draft, job: RunningJob): void => {
  let hints = d.state.hints;
  for (const ddoc of job.spec.ddocs) hints = hints.delete(ddocKeyOf(job.db, ddoc));
  const keys = d.state.dbIndexes.get(job.db) ?? [];
  if (keys.every((key) => isFresh(d.state.known.get(key)))) hints = hints.delete(ddocKeyOf(job.db, ""));
  update(d, { hints });
};

/** ken's prune: rows of jobs not running whose last start is older than `delay`; and queries past their window. */
export const maybePrune = (d: Draft): void => {
  if (d.nowMs < d.state.nextPruneAtMs) return;
  const cutoffMs = d.nowMs - d.state.config.kenDelayMs;
  let jobs = d.state.jobs;
  for (const [key, row] of jobs.entries()) if (row.runningJobId === undefined && row.lastRunMs < cutoffMs) jobs = jobs.delete(key);
  const queried = d.state.queried.takeUntil(d.nowMs - d.state.config.queryWindowMs).rest;
  update(d, { jobs, queried, nextPruneAtMs: d.nowMs + d.state.config.pruneIntervalMs });
};

/** The next prune matters only while there is something to prune. */
export const nextPruneWakeMs = (d: Draft): number | undefined =>
  d.state.jobs.size > 0 || d.state.queried.size > 0 ? d.state.nextPruneAtMs : undefined;
