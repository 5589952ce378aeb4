/**
 * When a due check can wait for a request that goes out anyway (issue #8:
 * the budget goes where the expected gain is largest).
 *
 * A check's answer decides which queue the object joins: the first channel,
 * in configured order, that gives it a priority. While that channel (as the
 * object's projected sizes say) runs as many jobs as its concurrency, the
 * answer cannot start anything there. The next start comes when one of its
 * jobs ends, and that start's precheck carries every waiting db along
 * (checks.ts `rideAlong`), as CouchDB's job looks do. So the check waits for
 * it and spends no token. It never waits past `max_check_interval_secs`
 * after the object's last check: growth may have changed, and a job that
 * runs for hours must not leave the queue blind.
 *
 * Objects the prediction knows nothing of never wait: no check yet, no growth
 * learnt (the probe), or no channel that would take them (due by the cap,
 * which exists to catch a wrong prediction). Nor does a channel with
 * concurrency 0 make anything wait: it never starts.
 *
 * Pure: the watch, the channels, the clock. The rule is `checkWaitsUntilMs`;
 * the rest applies it to the core's state (the pump in checks.ts, the wake
 * in housekeeping.ts).
 */
import type { TimedEntry } from "../shared/persistent.js";
import { channelHasRoom } from "./channel.js";
import type { DueQueues } from "./check-queues.js";
import type { Watch, ScheduleSettings } from "./check-schedule.js";
import type { ChannelConfig } from "./config.js";
import { projectInfo } from "./growth.js";
import { channelConfigsFor, settingsOf } from "./policy-settings.js";
import { firstTakingChannel } from "./priority.js";
import type { SmooshState } from "./state.js";
import type { CompactionObject } from "./types.js";

/** The channel the projected sizes of `watch` would queue it in: the first that gives a priority. */
export const projectedChannel = (watch: Watch, channels: readonly ChannelConfig[]): ChannelConfig | undefined => {
  if (watch.last === undefined || watch.growth === undefined) return undefined;
  return firstTakingChannel(channels, projectInfo(watch.last.info, watch.growth, watch.updates))?.channel;
};

/**
 * Until when the due check of `watch` may wait for a start in a full channel;
 * `undefined`: it should go now. `isFull(name)`: that channel runs as many
 * jobs as its (non-zero) concurrency.
 */
export const checkWaitsUntilMs = (
  watch: Watch,
  channels: readonly ChannelConfig[],
  isFull: (channel: string) => boolean,
  settings: ScheduleSettings,
  nowMs: number,
): number | undefined => {
  // No coalescing window: every check goes when due (as freshInfo's reuse is off then).
  if (watch.last === undefined || settings.minCheckIntervalMs === 0) return undefined;
  const deadlineMs = watch.last.atMs + settings.maxCheckIntervalMs;
  if (nowMs >= deadlineMs) return undefined;
  const channel = projectedChannel(watch, channels);
  return channel !== undefined && isFull(channel.name) ? deadlineMs : undefined;
};

/** A channel that runs as many jobs as its concurrency (0 never starts anything, so nothing waits for it). */
const channelFull = (s: SmooshState, name: string): boolean => {
  const channel = s.channels.get(name);
  return channel !== undefined && channel.config.concurrency > 0 && !channelHasRoom(s, channel);
};

/** Some channel is full: one of the jobs' channels (most of the time there is no job at all). */
const anyChannelFull = (s: SmooshState): boolean => {
  if (s.jobs.size === 0) return false;
  for (const job of s.jobs.values()) if (channelFull(s, job.channel)) return true;
  return false;
};

/** When the head of a due queue wants a request: its due time, or, due already, until when it can wait for a start. */
const headWakeMs = (s: SmooshState, head: TimedEntry<CompactionObject> | undefined, nowMs: number): number | undefined => {
  if (head === undefined || head.atMs > nowMs) return head?.atMs;
  const watch = s.watches.get(head.key);
  if (watch === undefined) return head.atMs;
  return checkWaitsUntilMs(watch, channelConfigsFor(s, head.value), (name) => channelFull(s, name), settingsOf(s), nowMs) ?? head.atMs;
};

const earlier = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : Math.min(a, b));

/**
 * When due checks next want a request (at or before `nowMs`: now). Each due
 * queue (dbs, other objects) is judged by its head, the earliest due, which
 * is where a request is expected to gain the most: when the head can wait
 * for a start in a full channel (`checkWaitsUntilMs`), so can the checks behind
 * it, until the head's deadline, a job's end or a change that reschedules
 * them. `undefined`: nothing is scheduled.
 */
export const dueCheckWakeMs = (s: SmooshState, nowMs: number): number | undefined => {
  const db = s.checks.dueDbs.earliest();
  const other = s.checks.dueOthers.earliest();
  const earliestMs = earlier(db?.atMs, other?.atMs);
  // Nothing due yet, or no full channel to wait for (the usual case: no per-object work).
  if (earliestMs === undefined || earliestMs > nowMs || !anyChannelFull(s)) return earliestMs;
  return earlier(headWakeMs(s, db, nowMs), headWakeMs(s, other, nowMs));
};

/** The due queues whose head wants a request now (the pump takes only from those). */
export const dueQueuesGoing = (s: SmooshState, nowMs: number): DueQueues => {
  const db = s.checks.dueDbs.earliest();
  const other = s.checks.dueOthers.earliest();
  const someFull = anyChannelFull(s);
  const goes = (head: TimedEntry<CompactionObject> | undefined): boolean =>
    head !== undefined && head.atMs <= nowMs && (!someFull || headWakeMs(s, head, nowMs)! <= nowMs);
  return { dbs: goes(db), others: goes(other) };
};
