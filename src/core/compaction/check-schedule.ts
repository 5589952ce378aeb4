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
  return watch.updates >= watch.updatesToGo ? earliest : capAtMs;
};

/**
 * Whether the updates of a dirty `watch` going up to `updates` change what
 * `nextCheckAtMs` says: it reads the count only against the probe's
 * `PROBE_UPDATES` (no growth learnt yet) or the predicted `updatesToGo`, and
 * not at all before a first check. Most updates cross neither, and then an
 * object already scheduled stays where it is (checks.ts `markDirty`).
 */
export const updatesMatter = (watch: Watch, updates: number): boolean => {
  if (watch.last === undefined) return false;
  const threshold = watch.growth === undefined ? PROBE_UPDATES : watch.updatesToGo;
  return watch.updates < threshold && updates >= threshold;
};
