/**
 * Taking and restoring snapshots of the queues (`persist = true`).
 */
import { placeInChannel, removeFromQueues } from "./channel.js";
import { forceCheck, rescheduleKeys } from "./checks.js";
import { channelKindOf, objectKey } from "./object.js";
import { queueItems } from "./queue.js";
import type { SmooshSnapshot } from "./snapshot.js";
import { isIgnored, log, type Draft, type SmooshState } from "./state.js";
import type { CompactionObject } from "./types.js";

/** Queued items per channel, best first; running (and starting) objects first at priority Infinity. */
export const takeSnapshot = (state: SmooshState, nowMs: number): SmooshSnapshot => {
  const channels: Record<string, Array<{ object: CompactionObject; priority: number }>> = {};
  for (const [name, channel] of state.channels) {
    const running = [...state.jobs.values()]
      .filter((job) => job.channel === name)
      .map((job) => ({ object: job.object, priority: Infinity }));
    const queued = queueItems(channel.queue).map((item) => ({ object: item.value, priority: item.priority }));
    channels[name] = [...running, ...queued];
  }
  return { version: 1, savedAtMs: nowMs, channels };
};

/**
 * Put saved items back. Items of a channel that no longer exists (or of the
 * wrong kind for it) are not lost: they are checked again and go wherever
 * today's channels put them. Ignored dbs and objects already running are skipped.
 */
export const restoreSnapshot = (d: Draft, snapshot: SmooshSnapshot): void => {
  let restored = 0;
  for (const [name, items] of Object.entries(snapshot.channels)) {
    for (const { object, priority } of items) {
      if (isIgnored(d.state, object) || d.state.runningKeys.has(objectKey(object))) continue;
      const channel = d.state.channels.get(name);
      if (channel === undefined || channel.config.kind !== channelKindOf(object.kind) || priority <= 0) {
        forceCheck(d, object);
        continue;
      }
      removeFromQueues(d, objectKey(object), name);
      rescheduleKeys(d, [objectKey(object), ...placeInChannel(d, name, object, priority)]);
      restored += 1;
    }
  }
  log(d, "info", "smoosh: restored persisted queues", { restored, savedAtMs: snapshot.savedAtMs });
};

