/**
 * How urgent compacting an object is for one channel: the seed's
 * `smoosh_server:get_priority/4` (plus `db_changed/2`), then CouchDB's later
 * quantization. 0 means "this channel does not take it".
 */
import type { ChannelConfig } from "./config.js";
import { channelKindOf } from "./object.js";
import type { ObjectInfo } from "./types.js";

type PriorityRule = Pick<
  ChannelConfig,
  "kind" | "priority" | "minPriority" | "maxPriority" | "minSizeBytes" | "maxSizeBytes" | "minChanges"
>;

/** `get_priority/4` verbatim, unquantized. */
export const sizePriority = (
  channel: Pick<PriorityRule, "priority" | "minPriority" | "maxPriority" | "minSizeBytes" | "maxSizeBytes">,
  fileBytes: number,
  activeBytes: number,
  needsUpgrade: boolean,
): number => {
  const { priority, minPriority, maxPriority, minSizeBytes, maxSizeBytes } = channel;
  if (priority === "upgrade" && needsUpgrade) return 1;
  if (fileBytes <= minSizeBytes || fileBytes > maxSizeBytes) return 0;
  // Quirk kept from the seed (and still in CouchDB): with no live data every
  // channel, an upgrade channel included, answers its min_priority, even
  // though an upgrade channel otherwise only takes files needing an upgrade.
  if (activeBytes === 0) return minPriority;
  if (priority === "ratio") {
    const ratio = fileBytes / activeBytes;
    return ratio <= minPriority || ratio > maxPriority ? 0 : ratio;
  }
  if (priority === "slack") {
    const slack = fileBytes - activeBytes;
    return slack <= minPriority || slack > maxPriority ? 0 : slack;
  }
  return 0;
};

/**
 * CouchDB today: integers kept, floats >= 16 rounded to an integer, smaller
 * floats rounded to the nearest 1/16, so near-equal priorities tie and the
 * queue order among them is FIFO. Deliberate difference: a positive priority
 * never quantizes to 0 (it would silently mean "not taken"); it becomes 1/16.
 */
export const quantizePriority = (priority: number): number => {
  if (!Number.isFinite(priority) || Number.isInteger(priority)) return priority;
  if (priority >= 16) return Math.round(priority);
  const quantized = Math.round(priority * 16) / 16;
  return priority > 0 && quantized === 0 ? 1 / 16 : quantized;
};

/** The priority of an object in a channel, given the facts just fetched. */
export const channelPriority = (channel: PriorityRule, info: ObjectInfo): number => {
  if (channelKindOf(info.kind) !== channel.kind) return 0;
  switch (info.kind) {
    case "cleanup":
      return 1;
    case "view":
      // Views ignore min_changes (as CouchDB).
      return quantizePriority(sizePriority(channel, info.fileBytes, info.activeBytes, info.needsUpgrade));
    case "geo":
      // As a view (min_changes ignored); never in an old format, so an upgrade channel
      // takes one only by the empty-file quirk of sizePriority, as it takes an empty view.
      return quantizePriority(sizePriority(channel, info.fileBytes, info.activeBytes, false));
    case "db": {
      // The seed's db_changed/2: checked first, so even an upgrade waits for min_changes.
      if (info.compactedSeq !== undefined && info.updateSeq - info.compactedSeq < channel.minChanges) return 0;
      return quantizePriority(sizePriority(channel, info.fileBytes, info.activeBytes, info.needsUpgrade));
    }
  }
};

/**
 * The channel a check's answer queues the object in: the first, in configured
 * order, that gives it a priority (with that priority). Placement and the
 * wait-for-a-start rule both ask, so they always agree.
 */
export const firstTakingChannel = <C extends PriorityRule>(channels: readonly C[], info: ObjectInfo): { readonly channel: C; readonly priority: number } | undefined => {
  for (const channel of channels) {
    const priority = channelPriority(channel, info);
    if (priority > 0) return { channel, priority };
  }
  return undefined;
};
