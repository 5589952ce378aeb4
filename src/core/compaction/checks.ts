/**
 * Checks: looking at an object's sizes to decide whether and where to queue
 * it. Which objects are looked at, and when, is the check policy
 * (check-schedule.ts); this file keeps its memory (a watch per object, bounded)
 * and carries it out: updates mark an object dirty and schedule it; checks go
 * out under the global budget, dbs 100 to a request; answers teach each
 * object's growth and place it in the first channel, in configured order,
 * that gives it a non-zero priority.
 */
import { canSpend, refill, spend } from "./check-budget.js";
import { nextCheckAtMs, updatesMatter } from "./check-schedule.js";
import { dueQueuesGoing } from "./check-wait.js";
import {
  emptyCheckQueues,
  hasBackground,
  hasDue,
  isWaiting,
  takeBackground,
  takeRiders,
  pushBackground,
  pushForced,
  scheduleDue,
  takeDue,
  takeForced,
  unscheduleDue,
  withoutKey,
  type CheckQueues,
  type Taken,
} from "./check-queues.js";
import { channelsFor } from "./config.js";
import { placeInChannel, removeFromQueues } from "./channel.js";
import { channelConfigsFor, settingsOf } from "./policy-settings.js";
import { readForWatcher } from "./job-looks.js";
import { learnGrowth, NEVER, updatesUntilWorthIt, type Observation } from "./growth.js";
import { channelKindOf, describeObject, objectKey } from "./object.js";
import { firstTakingChannel } from "./priority.js";
import { queueHas } from "./queue.js";
import { bump, emit, isIgnored, log, takeId, update, type Draft, type Fetch, type SmooshState, type WatchEntry } from "./state.js";
import type { CompactionObject, ObjectInfo } from "./types.js";

const isQueued = (state: SmooshState, key: string): boolean => {
  for (const channel of state.channels.values()) if (queueHas(channel.queue, key)) return true;
  return false;
};

const untracked = (state: SmooshState, object: CompactionObject): boolean =>
  isIgnored(state, object) || channelsFor(state.config, channelKindOf(object.kind)).length === 0;

const freshWatch = (object: CompactionObject): WatchEntry => ({
  object,
  updates: 0,
  dirtySinceMs: undefined,
  last: undefined,
  growth: undefined,
  updatesToGo: NEVER,
});

/**
 * `watch` with its update count and dirty time replaced, built field by field:
 * every watch then has the one shape freshWatch gives it (a spread per update
 * was measurable in bench:simulate).
 */
const withUpdates = (watch: WatchEntry, updates: number, dirtySinceMs: number | undefined): WatchEntry => ({
  object: watch.object,
  updates,
  dirtySinceMs,
  last: watch.last,
  growth: watch.growth,
  updatesToGo: watch.updatesToGo,
});

const setChecks = (d: Draft, checks: CheckQueues): void => update(d, { checks });

/** Remember `watch`; a new one past the bound first makes room (see `evictCleanWatches`). */
const putWatch = (d: Draft, key: string, watch: WatchEntry): void => {
  if (d.state.watches.size >= d.state.config.maxPendingChecks && !d.state.watches.has(key)) evictCleanWatches(d);
  update(d, { watches: d.state.watches.set(key, watch) });
};

/**
 * Forget the tenth of clean watches checked longest ago (a forgotten object
 * is only looked at afresh when next written). Done in one pass when the
 * table is full rather than keeping an order up to date on every change: that
 * cost a quarter of a simulation's time.
 */
const evictCleanWatches = (d: Draft): void => {
  const clean = d.state.watches
    .entries()
    .filter(([, w]) => w.dirtySinceMs === undefined && !d.state.fetchingKeys.has(objectKey(w.object)))
    .sort(([, a], [, b]) => (a.last?.atMs ?? 0) - (b.last?.atMs ?? 0));
  const doomed = clean.slice(0, Math.max(1, Math.ceil(d.state.config.maxPendingChecks / 10)));
  update(d, { watches: doomed.reduce((w, [key]) => w.delete(key), d.state.watches) });
};

/** Running, being checked, backing off or forced: not scheduled by the policy until that ends (which reschedules it). */
const isHeld = (s: SmooshState, key: string): boolean =>
  s.runningKeys.has(key) || s.fetchingKeys.has(key) || s.retries.timeOf(key) !== undefined || s.checks.forced.has(key);

/** When the policy wants a dirty, not held object looked at, as things stand. */
const policyDueAtMs = (s: SmooshState, key: string, watch: WatchEntry): number =>
  // Staleness only bounds objects checked before: the queue lookups are skipped for the others.
  nextCheckAtMs(watch, settingsOf(s), watch.last !== undefined && isQueued(s, key));

/** Its due entry's time (scheduleDue keeps dbs in dueDbs and every other object in dueOthers: one lookup). */
const dueEntryAtMs = (s: SmooshState, key: string, object: CompactionObject): number | undefined =>
  (object.kind === "db" ? s.checks.dueDbs : s.checks.dueOthers).timeOf(key);

/** Put a dirty object where the policy says; nothing while it runs, is being checked, or backs off. */
const reschedule = (d: Draft, key: string, watch: WatchEntry): void => {
  const s = d.state;
  if (watch.dirtySinceMs === undefined) return setChecks(d, unscheduleDue(s.checks, key));
  if (isHeld(s, key)) return;
  const atMs = policyDueAtMs(s, key, watch);
  if (dueEntryAtMs(s, key, watch.object) === atMs) return;
  setChecks(d, scheduleDue(s.checks, key, watch.object, atMs));
};

/**
 * `count` more updates of the object under `key`: dirty since the first,
 * scheduled as the policy says. An object dirty already keeps its time
 * unless these updates cross the count the policy waits for: every other
 * input of its time reschedules it where it changes (a check's answer, a
 * job's end or release, a queue it joins or leaves, a config change), so a
 * dirty object is always where the policy puts it, or held
 * (`misplacedDueChecks`, asserted after every step of the core's
 * simulations). Four updates in five are of such objects: they cost a count.
 */
const markDirty = (d: Draft, key: string, object: CompactionObject, count: number): void => {
  const watch = d.state.watches.get(key) ?? freshWatch(object);
  const dirty = withUpdates(watch, watch.updates + count, watch.dirtySinceMs ?? d.nowMs);
  putWatch(d, key, dirty);
  if (watch.dirtySinceMs !== undefined && !updatesMatter(watch, dirty.updates)) return;
  reschedule(d, key, dirty);
};

/**
 * `flush`: no object waits to be checked any more. A written object keeps
 * its update count (what its next check learns growth from) but is no
 * longer dirty: its next update schedules it afresh.
 */
export const flushChecks = (d: Draft): void => {
  update(d, { checks: emptyCheckQueues(d.state.config.maxPendingChecks) });
  for (const [key, watch] of d.state.watches.entries()) {
    if (watch.dirtySinceMs !== undefined) putWatch(d, key, withUpdates(watch, watch.updates, undefined));
  }
};

/**
 * Objects whose situation changed (a job released them, a queue took them
 * in, put them back or dropped them, a check was answered or found no room):
 * each one's next look follows the policy as things stand now.
 */
export const rescheduleKeys = (d: Draft, keys: Iterable<string>): void => {
  for (const key of keys) {
    const watch = d.state.watches.get(key);
    if (watch !== undefined) reschedule(d, key, watch);
  }
};

/** After a config change (settings, channels, capacities): every dirty object where the new policy puts it. */
export const rescheduleDirty = (d: Draft): void => {
  for (const [key, watch] of d.state.watches.entries()) if (watch.dirtySinceMs !== undefined) reschedule(d, key, watch);
};

/**
 * Keys of dirty objects, tracked and not held, that do not wait in the due
 * queue at the time the policy gives them now: always none (what `markDirty`
 * relies on). For tests and simulations: O(watched objects).
 */
export const misplacedDueChecks = (s: SmooshState): string[] => {
  const misplaced: string[] = [];
  for (const [key, watch] of s.watches.entries()) {
    if (watch.dirtySinceMs === undefined || isHeld(s, key) || untracked(s, watch.object)) continue;
    if (dueEntryAtMs(s, key, watch.object) !== policyDueAtMs(s, key, watch)) misplaced.push(key);
  }
  return misplaced;
};

/** `count` update events of `object` were heard: coalesced into its next check, when the policy says. */
export const noteUpdates = (d: Draft, object: CompactionObject, count: number): void => {
  if (untracked(d.state, object)) return;
  markDirty(d, objectKey(object), object, count);
};

/** Operator enqueue, a due retry: checked at once, outside the budget. */
export const forceCheck = (d: Draft, object: CompactionObject): void => {
  if (untracked(d.state, object)) return;
  const key = objectKey(object);
  // Running or starting objects are not queued (CouchDB's add_to_queue).
  if (d.state.runningKeys.has(key)) return;
  if (d.state.fetchingKeys.has(key)) {
    // Its answer may predate the request: check again once it lands.
    update(d, { recheckKeys: new Set(d.state.recheckKeys).add(key) });
    return;
  }
  const { queues, result } = pushForced(d.state.checks, key, object);
  if (result === "full") {
    dropped(d, object, "forced");
    // Not forced after all (a due retry finds no room): looked at when the policy says.
    return rescheduleKeys(d, [key]);
  }
  update(d, { checks: queues, retries: d.state.retries.delete(key) });
};

/** A rescan: look when a request has room. */
export const backgroundCheck = (d: Draft, object: CompactionObject): void => {
  if (untracked(d.state, object)) return;
  const key = objectKey(object);
  const s = d.state;
  if (s.runningKeys.has(key) || s.fetchingKeys.has(key) || s.retries.timeOf(key) !== undefined || isWaiting(s.checks, key)) return;
  const { queues, result } = pushBackground(s.checks, key, object);
  if (result === "full") return dropped(d, object, "background");
  setChecks(d, queues);
};

const dropped = (d: Draft, object: CompactionObject, queue: string): void => {
  bump(d, "droppedAtCapacity");
  log(d, "warn", "smoosh: too many objects waiting to be checked, dropped", { object: describeObject(object), queue, limit: d.state.config.maxPendingChecks });
};

/** Send one request's worth of checks. */
const emitChecks = (d: Draft, taken: Taken): void => {
  const batchId = takeId(d);
  const fetches = new Map(d.state.fetches);
  const fetchingKeys = new Map(d.state.fetchingKeys);
  let sent = 0;
  update(d, { checks: taken.queues });
  for (const { key, object } of taken.objects) {
    if (untracked(d.state, object) || d.state.runningKeys.has(key) || fetchingKeys.has(key)) continue;
    const watch = d.state.watches.get(key) ?? freshWatch(object);
    // Updates from now on count for the next check.
    putWatch(d, key, withUpdates(watch, 0, undefined));
    const requestId = takeId(d);
    const fetch: Fetch = { object, batchId, updates: watch.updates };
    fetches.set(requestId, fetch);
    fetchingKeys.set(key, requestId);
    emit(d, { type: "fetch-info", requestId, object, purpose: "enqueue" });
    sent += 1;
  }
  const batchesInFlight = new Map(d.state.batchesInFlight);
  if (sent > 0) batchesInFlight.set(batchId, sent);
  update(d, { fetches, fetchingKeys, batchesInFlight, retries: taken.objects.reduce((r, o) => r.delete(o.key), d.state.retries) });
};

/** Refill the budget to now; take a token if there is one. */
export const takeToken = (d: Draft): boolean => {
  if (!hasToken(d)) return false;
  spendToken(d);
  return true;
};

/** After `hasToken` said yes (the budget is refilled to now). */
const spendToken = (d: Draft): void => update(d, { budget: spend(d.state.budget) });

/** Refill the budget to now; whether it has a token to spend. */
const hasToken = (d: Draft): boolean => {
  const budget = refill(d.state.budget, d.state.config.checkRequestsPerSec, d.nowMs);
  if (budget !== d.state.budget) update(d, { budget });
  return canSpend(budget);
};

const hasRequestSlot = (d: Draft): boolean => d.state.batchesInFlight.size < d.state.config.maxInfoRequests;

/** Forced checks go out at once (requests in flight bounded, no budget). */
export const pumpForcedChecks = (d: Draft): void => {
  while (hasRequestSlot(d)) {
    const forced = takeForced(d.state.checks, d.state.config.dbsPerInfoRequest);
    if (forced === undefined) return;
    emitChecks(d, forced);
  }
};

/**
 * Due checks, while the budget has a token (one per request). When background
 * work (rescans) waits too, every `BACKGROUND_SHARE`th token is left to it, so
 * steady writes never starve rescans.
 */
export const pumpDueChecks = (d: Draft): void => {
  // Tested with hasDue: building a batch of 100 just to test for one, when no token was left, was a fifth of a simulation.
  while (hasRequestSlot(d) && hasDue(d.state.checks, d.nowMs)) {
    if (backgroundCanRun(d.state) && d.state.dueTokensInARow >= BACKGROUND_SHARE - 1) return;
    // The token first: whether due checks wait for a start costs a projection per head, and most steps have no token.
    if (!hasToken(d)) return;
    const going = dueQueuesGoing(d.state, d.nowMs);
    if (!going.dbs && !going.others) return;
    spendToken(d);
    update(d, { dueTokensInARow: d.state.dueTokensInARow + 1 });
    emitChecks(d, takeDue(d.state.checks, d.nowMs, d.state.config.dbsPerInfoRequest, going)!);
  }
};

/** One token in this many goes to background work when both wait. */
export const BACKGROUND_SHARE = 4;

/** Background work that could go out now but for the budget (a listing or request slot is free for it). */
export const backgroundCanRun = (state: SmooshState): boolean =>
  (state.rescanListings.size > 0 && state.listingsInFlight.size < state.config.maxInfoRequests) ||
  (hasBackground(state.checks) && state.batchesInFlight.size < state.config.maxInfoRequests);

/** A token spent on background work: due work has the next ones again. */
export const noteBackgroundToken = (d: Draft): void => update(d, { dueTokensInARow: 0 });

/** Background checks (rescans), with what the budget has left once due work and listings are served. */
export const pumpBackgroundChecks = (d: Draft): void => {
  while (hasRequestSlot(d) && hasBackground(d.state.checks) && takeToken(d)) {
    noteBackgroundToken(d);
    emitChecks(d, takeBackground(d.state.checks, d.state.config.dbsPerInfoRequest)!);
  }
};

/**
 * A request for dbs that goes out anyway (a check batch, a precheck) carries
 * every other waiting db up to `dbsPerInfoRequest` (100), due yet or not:
 * `_dbs_info` answers 100 names for the price of one, so their next look
 * costs no request. Runs last in a step, when every db request of the step
 * is known (the shell sends a step's db infos together, that many to a request).
 */
export const rideAlong = (d: Draft): void => {
  const inStep = new Set(d.effects.flatMap((e) => (e.type === "fetch-info" && e.object.kind === "db" ? [e.object.db] : [])));
  if (inStep.size === 0) return;
  const batch = d.state.config.dbsPerInfoRequest;
  let room = Math.ceil(inStep.size / batch) * batch - inStep.size;
  room -= watchRunningCompactions(d, inStep, room);
  if (room <= 0) return;
  const taken = takeRiders(d.state.checks, room);
  if (taken.objects.length > 0) emitChecks(d, taken);
};

/**
 * Running db compactions ride along first: the core ignores their answers
 * (a job's end comes from the store), but a store adapter that polls for the
 * end can use them instead of asking itself (CouchDB: one GET a second per
 * compaction before). Returns how many rode.
 */
const watchRunningCompactions = (d: Draft, inStep: ReadonlySet<string>, room: number): number => {
  let riders = 0;
  for (const job of d.state.jobs.values()) {
    if (riders >= room) break;
    if (job.phase !== "active" || job.object.kind !== "db" || inStep.has(job.object.db)) continue;
    readForWatcher(d, job);
    riders += 1;
  }
  return riders;
};

type CheckAnswer = { readonly requestId: number; readonly info: ObjectInfo | "missing" | { error: string } };

/**
 * Answers to checks (a batch's together): learn each object's growth, then
 * queue it in the first channel that takes it. Forced checks that came while
 * one was in flight go out again once it lands.
 */
export const onChecksAnswered = (d: Draft, answers: readonly CheckAnswer[]): void => {
  const settled = settleFetches(d, answers);
  for (const { fetch, info } of settled) {
    const key = objectKey(fetch.object);
    placeAnswered(d, fetch, key, info);
    if (d.state.recheckKeys.has(key)) {
      const recheckKeys = new Set(d.state.recheckKeys);
      recheckKeys.delete(key);
      update(d, { recheckKeys });
      forceCheck(d, fetch.object);
    }
  }
};

/** Take answered fetches out of the in-flight maps: one copy of each map for the whole batch. */
const settleFetches = (d: Draft, answers: readonly CheckAnswer[]): { fetch: Fetch; info: CheckAnswer["info"] }[] => {
  const fetches = new Map(d.state.fetches);
  const fetchingKeys = new Map(d.state.fetchingKeys);
  const batchesInFlight = new Map(d.state.batchesInFlight);
  const settled: { fetch: Fetch; info: CheckAnswer["info"] }[] = [];
  for (const { requestId, info } of answers) {
    const fetch = fetches.get(requestId);
    if (fetch === undefined) continue;
    fetches.delete(requestId);
    fetchingKeys.delete(objectKey(fetch.object));
    const left = (batchesInFlight.get(fetch.batchId) ?? 1) - 1;
    if (left <= 0) batchesInFlight.delete(fetch.batchId);
    else batchesInFlight.set(fetch.batchId, left);
    settled.push({ fetch, info });
  }
  update(d, { fetches, fetchingKeys, batchesInFlight });
  return settled;
};

const placeAnswered = (d: Draft, fetch: Fetch, key: string, info: ObjectInfo | "missing" | { error: string }): void => {
  settleAnswer(d, fetch, key, info);
  // No longer being checked: it waits where the policy says now (its queue, the updates heard meanwhile).
  rescheduleKeys(d, [key]);
};

const settleAnswer = (d: Draft, fetch: Fetch, key: string, info: ObjectInfo | "missing" | { error: string }): void => {
  const { object } = fetch;
  if (info === "missing") {
    removeFromQueues(d, key);
    forget(d, key);
    log(d, "debug", "smoosh: object no longer exists", { object: describeObject(object) });
    return;
  }
  if ("error" in info) {
    // Its updates still count: it is looked at again when the policy says (under the budget).
    markDirty(d, key, object, fetch.updates);
    log(d, "warn", "smoosh: could not fetch info", { object: describeObject(object), error: info.error });
    return;
  }
  if (info.kind !== object.kind) {
    log(d, "error", "smoosh: info of the wrong kind, ignored", { object: describeObject(object), kind: info.kind });
    return;
  }
  learn(d, key, fetch, info);
  placeInFirstChannel(d, key, object, info);
};

/** Queue it in the first channel, in configured order, that gives it a priority; out of every queue if none does. */
const placeInFirstChannel = (d: Draft, key: string, object: CompactionObject, info: ObjectInfo): void => {
  if (isIgnored(d.state, object) || d.state.runningKeys.has(key)) return;
  const taking = firstTakingChannel(channelConfigsFor(d.state, object), info);
  if (taking === undefined) {
    // No channel wants it any more: an older entry must not linger at a stale priority.
    removeFromQueues(d, key);
    return;
  }
  removeFromQueues(d, key, taking.channel.name);
  rescheduleKeys(d, placeInChannel(d, taking.channel.name, object, taking.priority));
};

/** Record what the check saw, learn the growth since the previous one, predict the next crossing (the caller reschedules). */
const learn = (d: Draft, key: string, fetch: Fetch, info: ObjectInfo): void => {
  const watch = d.state.watches.get(key) ?? freshWatch(fetch.object);
  // Mid-compaction sizes say nothing about growth: the job's end rebases it (onCompacted).
  if (info.kind === "cleanup" || info.compactionRunning || d.state.runningKeys.has(key)) return putWatch(d, key, watch);
  const observation: Observation = { atMs: d.nowMs, info };
  const growth = watch.last === undefined ? watch.growth : learnGrowth(watch.last, observation, fetch.updates, watch.growth);
  const updatesToGo = growth === undefined ? NEVER : updatesUntilWorthIt(channelConfigsFor(d.state, fetch.object), info, growth);
  const next: WatchEntry = { ...watch, last: observation, growth, updatesToGo };
  putWatch(d, key, next);
  d.checkedThisStep.add(key);
};

/** After a compaction: the file should be about its live data now; updates during it still count. */
export const onCompacted = (d: Draft, object: CompactionObject): void => {
  const key = objectKey(object);
  const watch = d.state.watches.get(key);
  if (watch === undefined) return;
  const last = watch.last;
  if (last === undefined || watch.growth === undefined) return reschedule(d, key, watch);
  const info = { ...last.info, fileBytes: last.info.activeBytes, compactionRunning: false };
  const next: WatchEntry = {
    ...watch,
    last: { atMs: d.nowMs, info },
    updatesToGo: updatesUntilWorthIt(channelConfigsFor(d.state, object), info, watch.growth),
  };
  putWatch(d, key, next);
  reschedule(d, key, next);
};

/**
 * What the last check saw, if it can stand in for the precheck: only a check
 * answered in this very step (a db found qualifying and started at once).
 * Anything older may predate a compaction someone else started since, which
 * must be adopted, not started again; that precheck carries waiting dbs and
 * running compactions along (rideAlong), so it is also a check round.
 * A `min_check_interval_ms` of 0 turns the reuse off.
 */
export const freshInfo = (d: Draft, key: string): ObjectInfo | undefined => {
  if (!d.checkedThisStep.has(key) || d.state.config.minCheckIntervalMs === 0) return undefined;
  return d.state.watches.get(key)?.last?.info;
};

const forget = (d: Draft, key: string): void => {
  update(d, { watches: d.state.watches.delete(key), checks: withoutKey(d.state.checks, key) });
};

/** Forget everything about `db`'s objects (the db was deleted). O(tracked objects): deletions are rare. */
export const forgetDb = (d: Draft, belongs: (key: string) => boolean): void => {
  for (const [key] of d.state.watches.entries()) if (belongs(key)) forget(d, key);
  for (const key of [...d.state.checks.forced.values(), ...d.state.checks.backgroundDbs.values(), ...d.state.checks.backgroundOthers.values()].map(objectKey)) {
    if (belongs(key)) forget(d, key);
  }
};
