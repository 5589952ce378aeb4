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
 * Pure: the watch, the channels, the clock.
 */
import type { Watch, ScheduleSettings } from "./check-schedule.js";
import type { ChannelConfig } from "./config.js";
import { projectInfo } from "./growth.js";
import { channelPriority } from "./priority.js";

/** The channel the projected sizes of `watch` would queue it in: the first that gives a priority. */
export const projectedChannel = (watch: Watch, channels: readonly ChannelConfig[]): ChannelConfig | undefined => {
  if (watch.last === undefined || watch.growth === undefined) return undefined;
  const projected = projectInfo(watch.last.info, watch.growth, watch.updates);
  return channels.find((channel) => channelPriority(channel, projected) > 0);
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
