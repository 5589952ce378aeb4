/**
 * Channel-level rules: creation (paused), when a channel may start a job,
 * putting an object in a channel's queue, and the channel's status.
 */
import type { ChannelConfig } from "./config.js";
import { describeObject, objectKey } from "./object.js";
import { emptyQueue, queueHas, queueIn, queueInfo, queueRemove, queueTruncate, type QueueItem } from "./queue.js";
import { bump, log, setChannel, type ChannelState, type Draft, type SmooshState } from "./state.js";
import type { ChannelStatus, CompactionObject } from "./types.js";
import { inWindow } from "./window.js";

export const createChannel = (config: ChannelConfig, nowMs: number, waitSecs: number): ChannelState => ({
  config,
  queue: emptyQueue(),
  pausedUntilMs: nowMs + waitSecs * 1000,
});

/** Jobs of a channel in any phase: CouchDB's `active + starting`. */
export const channelJobCount = (state: SmooshState, channel: string): number => {
  let count = 0;
  for (const job of state.jobs.values()) if (job.channel === channel) count += 1;
  return count;
};

/**
 * Whether a channel may start something right now, ignoring its slots.
 * The window is checked here, at the moment of starting (CouchDB only
 * checked it on its periodic timer, so starts leaked up to 60 s out of it).
 */
export const channelOpen = (state: SmooshState, channel: ChannelState, nowMs: number): boolean =>
  !state.suspended && nowMs >= channel.pausedUntilMs && inWindow(channel.config.window, nowMs);

export const channelHasRoom = (state: SmooshState, channel: ChannelState): boolean =>
  channelJobCount(state, channel.config.name) < channel.config.concurrency;

const logDropped = (d: Draft, channel: string, dropped: readonly QueueItem<CompactionObject>[]): void => {
  for (const item of dropped) {
    bump(d, "droppedAtCapacity");
    log(d, "warn", "smoosh: queue full, dropped lowest priority item", {
      channel,
      object: describeObject(item.value),
      priority: item.priority,
    });
  }
};

/**
 * Queue `object` in `channelName` at `priority` (replacing an earlier entry),
 * truncating to capacity. Returns the keys dropped to make room (their
 * objects are no longer queued: the caller reschedules them, checks.ts `rescheduleKeys`).
 */
export const placeInChannel = (d: Draft, channelName: string, object: CompactionObject, priority: number): string[] => {
  const channel = d.state.channels.get(channelName);
  if (channel === undefined) return [];
  const { queue, dropped } = queueIn(channel.queue, objectKey(object), object, priority, d.nowMs, channel.config.capacity);
  setChannel(d, channelName, { ...channel, queue });
  const kept = dropped.every((item) => item.key !== objectKey(object));
  if (kept) {
    bump(d, "enqueued");
    log(d, "info", "smoosh: enqueued", { channel: channelName, object: describeObject(object), priority });
  }
  logDropped(d, channelName, dropped);
  return dropped.map((item) => item.key);
};

/** Take `key` out of every channel's queue except `except`. */
export const removeFromQueues = (d: Draft, key: string, except?: string): void => {
  for (const [name, channel] of d.state.channels) {
    if (name !== except && queueHas(channel.queue, key)) {
      setChannel(d, name, { ...channel, queue: queueRemove(channel.queue, key) });
    }
  }
};

/** Apply new settings to a kept channel; a smaller capacity truncates its queue now. */
export const reconfigureChannel = (d: Draft, channel: ChannelState, config: ChannelConfig): void => {
  const { queue, dropped } = queueTruncate(channel.queue, config.capacity);
  setChannel(d, config.name, { ...channel, config, queue });
  logDropped(d, config.name, dropped);
};

export const channelStatus = (state: SmooshState, channel: ChannelState): ChannelStatus => {
  let active = 0;
  let starting = 0;
  for (const job of state.jobs.values()) {
    if (job.channel !== channel.config.name) continue;
    if (job.phase === "active") active += 1;
    else starting += 1;
  }
  return { active, starting, waiting: queueInfo(channel.queue) };
};
