/**
 * Where objects wait to be checked, by urgency:
 * - `forced`: operator enqueues and due retries, at once and outside the budget;
 * - `due`: written objects, by the time the policy wants to look (check-schedule.ts);
 *   the earliest first, which is also the object predicted to have crossed its
 *   threshold longest ago: where a request is expected to gain the most;
 * - `background`: rescans, looked at when a request has room: db checks ride
 *   along in the batches (`_dbs_info` takes 100 names for the price of one).
 * Dbs and other objects wait apart, so a batch of dbs is taken in O(log n).
 * Every structure is persistent and bounded.
 */
import { BoundedFifo, TimedKeys } from "../shared/persistent.js";
import type { CompactionObject } from "./types.js";

export interface CheckQueues {
  readonly forced: BoundedFifo<CompactionObject>;
  readonly dueDbs: TimedKeys<CompactionObject>;
  readonly dueOthers: TimedKeys<CompactionObject>;
  readonly backgroundDbs: BoundedFifo<CompactionObject>;
  readonly backgroundOthers: BoundedFifo<CompactionObject>;
}

export const emptyCheckQueues = (limit: number): CheckQueues => ({
  forced: BoundedFifo.empty(limit),
  dueDbs: TimedKeys.empty(),
  dueOthers: TimedKeys.empty(),
  backgroundDbs: BoundedFifo.empty(limit),
  backgroundOthers: BoundedFifo.empty(limit),
});

const isDb = (object: CompactionObject): boolean => object.kind === "db";

export const withLimit = (q: CheckQueues, limit: number): CheckQueues => ({
  ...q,
  forced: q.forced.withLimit(limit),
  backgroundDbs: q.backgroundDbs.withLimit(limit),
  backgroundOthers: q.backgroundOthers.withLimit(limit),
});

/** Take `key` out of every queue (it is being checked, or no longer exists). */
export const withoutKey = (q: CheckQueues, key: string): CheckQueues => ({
  forced: q.forced.delete(key),
  dueDbs: q.dueDbs.delete(key),
  dueOthers: q.dueOthers.delete(key),
  backgroundDbs: q.backgroundDbs.delete(key),
  backgroundOthers: q.backgroundOthers.delete(key),
});

export const isWaiting = (q: CheckQueues, key: string): boolean =>
  q.forced.has(key) || q.dueDbs.timeOf(key) !== undefined || q.dueOthers.timeOf(key) !== undefined || q.backgroundDbs.has(key) || q.backgroundOthers.has(key);

export const dueAtMs = (q: CheckQueues, key: string): number | undefined => q.dueDbs.timeOf(key) ?? q.dueOthers.timeOf(key);

/** Schedule `object` at `atMs` (moving an earlier entry); it leaves the background queues. */
export const scheduleDue = (q: CheckQueues, key: string, object: CompactionObject, atMs: number): CheckQueues => {
  const base = { ...q, backgroundDbs: q.backgroundDbs.delete(key), backgroundOthers: q.backgroundOthers.delete(key) };
  return isDb(object) ? { ...base, dueDbs: q.dueDbs.set(key, atMs, object) } : { ...base, dueOthers: q.dueOthers.set(key, atMs, object) };
};

export const unscheduleDue = (q: CheckQueues, key: string): CheckQueues => ({ ...q, dueDbs: q.dueDbs.delete(key), dueOthers: q.dueOthers.delete(key) });

export type PushResult = "added" | "duplicate" | "full";

export const pushForced = (q: CheckQueues, key: string, object: CompactionObject): { queues: CheckQueues; result: PushResult } => {
  const { fifo, result } = withoutKey(q, key).forced.push(key, object);
  return { queues: { ...withoutKey(q, key), forced: fifo }, result };
};

export const pushBackground = (q: CheckQueues, key: string, object: CompactionObject): { queues: CheckQueues; result: PushResult } => {
  if (isDb(object)) {
    const { fifo, result } = q.backgroundDbs.push(key, object);
    return { queues: { ...q, backgroundDbs: fifo }, result };
  }
  const { fifo, result } = q.backgroundOthers.push(key, object);
  return { queues: { ...q, backgroundOthers: fifo }, result };
};

/** The time the earliest due object is due, if any. */
export const earliestDueMs = (q: CheckQueues): number | undefined => {
  const a = q.dueDbs.earliest()?.atMs;
  const b = q.dueOthers.earliest()?.atMs;
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
};

export interface Taken {
  readonly queues: CheckQueues;
  /** One request's worth: up to `batch` dbs, or one other object. */
  readonly objects: readonly { readonly key: string; readonly object: CompactionObject }[];
}

/** Up to `batch` forced objects of one kind (dbs batch; others go one by one). */
export const takeForced = (q: CheckQueues, batch: number): Taken | undefined => {
  const first = q.forced.shift();
  if (first === undefined) return undefined;
  let forced = first.fifo;
  const objects = [{ key: first.key, object: first.value }];
  // Forced dbs travel together too (enqueue_all of 100,000 dbs is 1,000 requests, not 100,000).
  while (isDb(first.value) && objects.length < batch) {
    const next = forced.shift();
    if (next === undefined || !isDb(next.value)) break;
    forced = next.fifo;
    objects.push({ key: next.key, object: next.value });
  }
  return { queues: { ...q, forced }, objects };
};

/** Which due queues a request may take from (the other one's head waits: check-wait.ts `dueQueuesGoing`). */
export interface DueQueues {
  readonly dbs: boolean;
  readonly others: boolean;
}

const BOTH: DueQueues = { dbs: true, others: true };

/**
 * One request's worth of due work at `nowMs` from the queues `from` allows:
 * the earliest due object; if it is a db, every db due by now up to `batch`,
 * topped up from the background. `undefined`: nothing is due now.
 */
export const takeDue = (q: CheckQueues, nowMs: number, batch: number, from: DueQueues = BOTH): Taken | undefined => {
  const db = q.dueDbs.earliest();
  const other = q.dueOthers.earliest();
  const dbDue = from.dbs && db !== undefined && db.atMs <= nowMs;
  const otherDue = from.others && other !== undefined && other.atMs <= nowMs;
  if (otherDue && (!dbDue || other.atMs < db.atMs)) {
    return { queues: { ...q, dueOthers: q.dueOthers.delete(other.key) }, objects: [{ key: other.key, object: other.value }] };
  }
  return dbDue ? takeDbBatch(q, nowMs, batch) : undefined;
};

/** Whether `takeDue` would give something at `nowMs`, without building the batch (a pump tests this every step). */
export const hasDue = (q: CheckQueues, nowMs: number): boolean => {
  const db = q.dueDbs.earliest();
  const other = q.dueOthers.earliest();
  return (db !== undefined && db.atMs <= nowMs) || (other !== undefined && other.atMs <= nowMs);
};

/** One request's worth of background work: a batch of dbs, else one other object. */
export const takeBackground = (q: CheckQueues, batch: number): Taken | undefined => {
  if (q.backgroundDbs.size > 0) return takeDbBatch(q, Number.NEGATIVE_INFINITY, batch);
  const next = q.backgroundOthers.shift();
  if (next === undefined) return undefined;
  return { queues: { ...q, backgroundOthers: next.fifo }, objects: [{ key: next.key, object: next.value }] };
};

const takeDbBatch = (q: CheckQueues, nowMs: number, batch: number): Taken => {
  let dueDbs = q.dueDbs;
  let backgroundDbs = q.backgroundDbs;
  const objects: { key: string; object: CompactionObject }[] = [];
  for (let next = dueDbs.earliest(); next !== undefined && next.atMs <= nowMs && objects.length < batch; next = dueDbs.earliest()) {
    dueDbs = dueDbs.delete(next.key);
    objects.push({ key: next.key, object: next.value });
  }
  while (objects.length < batch) {
    const next = backgroundDbs.shift();
    if (next === undefined) break;
    backgroundDbs = next.fifo;
    objects.push({ key: next.key, object: next.value });
  }
  return { queues: { ...q, dueDbs, backgroundDbs }, objects };
};

/** Up to `room` waiting dbs, due or not (earliest due first, then background): free riders on a request going out. */
export const takeRiders = (q: CheckQueues, room: number): Taken => takeDbBatch(q, Number.POSITIVE_INFINITY, room);

export const hasBackground = (q: CheckQueues): boolean => q.backgroundDbs.size > 0 || q.backgroundOthers.size > 0;
