/**
 * The check policy's rule: when is an object that was written looked at
 * again? (issue #8; it replaces "staleness for every check".)
 *
 * - Coalesce: updates within `min_check_interval_ms` of the first one, or of
 *   the last check, cost one check.
 * - Predict: from the growth per update its last checks saw, the object is
 *   due as soon as the updates heard since its last check should have made
 *   some channel take it; an object far from its threshold waits.
 * - Learn: an object with no growth learnt yet is looked at again after a
 *   few updates (or a short probe time), so the second look teaches the growth.
 * - Extrapolate within the evidence: a prediction from growth seen over u
 *   updates stands for at most `EXTRAPOLATION` x u updates more; then the
 *   object is looked at again (`updatesBeforeLook`).
 * - Cap: a written object is looked at within `max_check_interval_secs`,
 *   whatever the prediction says (growth may change).
 * - Staleness (the seed's meaning): an object already queued is not
 *   re-checked within `staleness` minutes of its last check.
 *
 * A pure function of the watch, the settings and the clock: the same inputs
 * always give the same time.
 */
import type { Growth, Observation } from "./growth.js";

/** What the policy remembers of one object. */
export interface Watch {
  /** Update events heard since the last check was asked for. */
  readonly updates: number;
  /** When the first of those came; undefined: nothing new since the last check (clean). */
  readonly dirtySinceMs: number | undefined;
  /** The last check's answer (or, after a compaction, the sizes it should have left). */
  readonly last: Observation | undefined;
  readonly growth: Growth | undefined;
  /** Updates after `last` until some channel takes it, as predicted at `last` (Infinity: not foreseen). */
  readonly updatesToGo: number;
}

export interface ScheduleSettings {
  readonly minCheckIntervalMs: number;
  readonly maxCheckIntervalMs: number;
  readonly stalenessMs: number;
}

/** Updates after which an object without learnt growth is looked at again: enough to measure, few enough to be early. */
export const PROBE_UPDATES = 3;

/** How long after its last check an object without learnt growth is looked at again, at the latest. */
export const probeDelayMs = (settings: ScheduleSettings): number =>
  Math.min(settings.maxCheckIntervalMs, Math.max(5_000, 5 * settings.minCheckIntervalMs));

/**
 * How many times the updates it was learnt over a growth is trusted for.
 * Growth can change its nature between two looks: a db filled by a bulk
 * insert (its live data grows with its file, so the garbage ratio is
 * predicted never to reach 2), then rewritten by updates (the live data
 * stops growing and the ratio crosses 2 in a few). Trusted without a bound,
 * that prediction left such a db uncompacted until `max_check_interval_secs`
 * (5 minutes; seen on CouchDB 3.4.3 in the daemon contract's outage
 * scenario). Bounded, the spans between looks grow at most fourfold: an
 * object that stays far from every threshold costs about log4 of its
 * updates in looks over its life, not one per update.
 */
export const EXTRAPOLATION = 4;

/** Updates after the last check before the object is looked at again: the probe's, or the prediction within the evidence. */
export const updatesBeforeLook = (watch: Watch): number => {
  if (watch.growth === undefined) return PROBE_UPDATES;
  return Math.min(watch.updatesToGo, Math.max(PROBE_UPDATES, EXTRAPOLATION * watch.growth.learntOverUpdates));
};

/** When the dirty `watch` should be checked next (never earlier than the coalescing window allows). */
export const nextCheckAtMs = (watch: Watch, settings: ScheduleSettings, queued: boolean): number => {
  const dirtySinceMs = watch.dirtySinceMs ?? Number.POSITIVE_INFINITY;
  const lastAtMs = watch.last?.atMs;
  let earliest = dirtySinceMs + settings.minCheckIntervalMs;
  if (lastAtMs === undefined) return earliest;
  earliest = Math.max(earliest, lastAtMs + settings.minCheckIntervalMs);
  if (queued) earliest = Math.max(earliest, lastAtMs + settings.stalenessMs);
  const capAtMs = Math.max(earliest, lastAtMs + settings.maxCheckIntervalMs);
  if (watch.growth === undefined) {
    if (watch.updates >= PROBE_UPDATES) return earliest;
    return Math.min(capAtMs, Math.max(earliest, lastAtMs + probeDelayMs(settings)));
  }
  return watch.updates >= updatesBeforeLook(watch) ? earliest : capAtMs;
};

/**
 * Whether the updates of a dirty `watch` going up to `updates` change what
 * `nextCheckAtMs` says: it reads the count only against `updatesBeforeLook`
 * (the probe's, or the prediction within the evidence), and not at all
 * before a first check. Most updates do not reach it, and then an object
 * already scheduled stays where it is (checks.ts `markDirty`).
 */
export const updatesMatter = (watch: Watch, updates: number): boolean => {
  if (watch.last === undefined) return false;
  const threshold = updatesBeforeLook(watch);
  return watch.updates < threshold && updates >= threshold;
};
