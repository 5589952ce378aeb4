/**
 * Looks at running db compactions, for stores that see a compaction end
 * only in the db's info (CouchDB: no event says so). With
 * `jobLookIntervalMs` > 0 the core makes that read itself, once an
 * interval while a job is young and less often as it runs on (a quarter of
 * its running time, at most a minute: look-delay.ts), for all running db
 * jobs at once. The look goes out in one
 * `_dbs_info` request with their channels' next items (and, through
 * rideAlong, with the dbs waiting to be checked), and the store's watcher
 * sees the ends in its answer.
 *
 * Any db read with such a store, at most one interval old and with no
 * suspend since, serves as a start's precheck. The look that shows the slot
 * free carries the next item, or finds the dbs that now come before it. A
 * start then costs its `POST _compact` alone, with no precheck request first.
 * The price: a compaction of that db started by someone else within
 * the interval goes unseen. Before, the window was only the precheck's own
 * round trip. CouchDB's `POST /{db}/_compact` on a db being compacted joins
 * the running compaction, so such a job is counted as started rather than
 * adopted and is watched to its end all the same. A suspend or a resume
 * forgets every read, and reads asked for before it are not remembered when
 * they land (the daemon contract: someone else may start a compaction
 * during a pause, and an info that may predate it never stands in for a
 * precheck after it).
 */
import { channelHasRoom } from "./channel.js";
import { lookDelayMs } from "./look-delay.js";
import { objectKey } from "./object.js";
import { queueOut } from "./queue.js";
import { emit, takeId, update, type Draft, type Job, type RecentRead, type SmooshState } from "./state.js";
import type { InfoAnswer, ObjectInfo } from "./types.js";

const looksOn = (state: SmooshState): boolean => state.config.jobLookIntervalMs > 0;

/** The wait before a running job's next look: it grows with how long the job has run (look-delay.ts). */
const nextLookDelayMs = (d: Draft, job: Job): number => lookDelayMs(d.nowMs - (job.activeSinceMs ?? d.nowMs), d.state.config.jobLookIntervalMs);

/** When a running db job is first looked at: one wait after it began, which is one interval (undefined: never). */
export const firstLookAtMs = (d: Draft, job: Job): number | undefined =>
  looksOn(d.state) && job.object.kind === "db" ? d.nowMs + nextLookDelayMs(d, job) : undefined;

const isLooked = (job: Job): boolean => job.phase === "active" && job.nextLookAtMs !== undefined;

/**
 * When one running db job's look is due, read every running db job, each
 * with its channel's next item: the reads go out in one `_dbs_info` request,
 * and each job's next look is its wait from now (an interval while it is
 * young, longer as it runs on: look-delay.ts). Jobs that began at
 * different times (several channels, `concurrency` > 1) are then looked at
 * together, one request per interval in all rather than one per job: at
 * `concurrency = 2` on bench:churn's CouchDB row, looks made apart cost 2.20
 * requests a compaction (docs/benchmarks.md). A job looked at early (it began
 * just now) costs a key in that request, not a request.
 */
export const lookAtRunningJobs = (d: Draft): void => {
  if (!looksOn(d.state)) return;
  const looked = [...d.state.jobs.values()].filter(isLooked);
  if (!looked.some((job) => job.nextLookAtMs! <= d.nowMs)) return;
  const jobs = new Map(d.state.jobs);
  for (const job of looked) jobs.set(job.jobId, { ...job, nextLookAtMs: d.nowMs + nextLookDelayMs(d, job) });
  update(d, { jobs });
  const lookedPerChannel = new Map<string, number>();
  for (const job of looked) {
    readForWatcher(d, job);
    lookedPerChannel.set(job.channel, (lookedPerChannel.get(job.channel) ?? 0) + 1);
  }
  for (const [channel, jobCount] of lookedPerChannel) lookAhead(d, channel, jobCount);
};

/** Read a running job's object for the store's watcher: the core ignores the answer (a job's end comes from the store). */
export const readForWatcher = (d: Draft, job: Job): void => {
  emit(d, { type: "fetch-info", requestId: job.jobId, object: job.object, purpose: "watch" });
};

/**
 * Read the channel's next items along with the look, as many as it has jobs
 * looked at (each may have ended: with two ends seen, both starts then need
 * no precheck of their own), less those already in flight; none while a
 * slot is free anyway. The queue is persistent: taking from a copy is cheap.
 */
const lookAhead = (d: Draft, channelName: string, lookedJobs: number): void => {
  const channel = d.state.channels.get(channelName);
  if (channel === undefined || channelHasRoom(d.state, channel)) return;
  let wanted = lookedJobs;
  for (const inFlight of d.state.aheadFetches.values()) if (inFlight.channel === channelName) wanted -= 1;
  let queue = channel.queue;
  const aheadFetches = new Map(d.state.aheadFetches);
  for (let next = queueOut(queue); wanted > 0 && next !== undefined; next = queueOut(queue)) {
    queue = next.queue;
    // An item running or being read (a check of it in flight) ends the look ahead: that read decides what follows.
    if (d.state.runningKeys.has(next.key) || d.state.fetchingKeys.has(next.key)) break;
    const requestId = takeId(d);
    aheadFetches.set(requestId, { channel: channelName, key: next.key });
    emit(d, { type: "fetch-info", requestId, object: next.value, purpose: "precheck-ahead" });
    wanted -= 1;
  }
  if (aheadFetches.size !== d.state.aheadFetches.size) update(d, { aheadFetches });
};

/** A look ahead answered (remembered with the batch's other reads). False: `requestId` was not one. */
export const settleAhead = (d: Draft, requestId: number): boolean => {
  if (!d.state.aheadFetches.has(requestId)) return false;
  const aheadFetches = new Map(d.state.aheadFetches);
  aheadFetches.delete(requestId);
  update(d, { aheadFetches });
  return true;
};

/**
 * Remember a batch's db reads (checks and looks ahead; not jobs: a precheck
 * is used at once, a running db is never started) for the starts of the next
 * interval. Called before the batch is settled. Reads older than an interval
 * are dropped here, so the memory holds one interval's reads at most (a few
 * batches of 100).
 */
export const rememberReads = (d: Draft, answers: readonly InfoAnswer[]): void => {
  if (!looksOn(d.state)) return;
  const reads: [string, RecentRead][] = [];
  for (const answer of answers) {
    if (answer.requestId < d.state.readsFromId || "error" in answer || answer.info === "missing" || answer.info.kind !== "db") continue;
    const checked = d.state.fetches.get(answer.requestId)?.object;
    const key = d.state.aheadFetches.get(answer.requestId)?.key ?? (checked === undefined ? undefined : objectKey(checked));
    if (key !== undefined && !d.state.runningKeys.has(key)) reads.push([key, { info: answer.info, answeredAtMs: d.nowMs }]);
  }
  if (reads.length === 0) return;
  const recentReads = new Map<string, RecentRead>();
  for (const [key, read] of d.state.recentReads) if (isFresh(d, read)) recentReads.set(key, read);
  for (const [key, read] of reads) recentReads.set(key, read);
  update(d, { recentReads });
};

/** The read of `key` that can stand in for its precheck: at most one interval old. Used up once taken. */
export const takeRecentRead = (d: Draft, key: string): ObjectInfo | undefined => {
  const read = d.state.recentReads.get(key);
  if (read === undefined) return undefined;
  const recentReads = new Map(d.state.recentReads);
  recentReads.delete(key);
  update(d, { recentReads });
  return isFresh(d, read) ? read.info : undefined;
};

const isFresh = (d: Draft, read: RecentRead): boolean =>
  !d.state.suspended && looksOn(d.state) && d.nowMs - read.answeredAtMs <= d.state.config.jobLookIntervalMs;

/** A suspend or a resume: nothing read, or asked for, before it may stand in for a precheck after it. */
export const forgetReads = (d: Draft): void => {
  update(d, { recentReads: d.state.recentReads.size > 0 ? new Map() : d.state.recentReads, readsFromId: d.state.nextId });
};

/** The earliest look due, for the core's next tick. */
export const nextLookMs = (state: SmooshState): number | undefined => {
  let earliest: number | undefined;
  for (const job of state.jobs.values()) {
    if (job.phase !== "active" || job.nextLookAtMs === undefined) continue;
    if (earliest === undefined || job.nextLookAtMs < earliest) earliest = job.nextLookAtMs;
  }
  return earliest;
};
