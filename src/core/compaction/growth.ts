/**
 * Predicting when an object will be worth compacting, from what its last
 * checks saw. Growth is learnt per *update event* (bytes the file and the
 * live data gain per `db-updated` / `view-updated` the daemon hears), not per
 * second: an object only grows when it is written, so a count of updates
 * since the last check is a better clock than the wall one, and a burst is
 * seen at once. The daemon counts updates for free (they are the events it
 * receives), so a prediction costs no request.
 */
import type { ChannelConfig } from "./config.js";
import { channelPriority } from "./priority.js";
import type { DbSizeInfo, GeoSizeInfo, ObjectInfo, ViewSizeInfo } from "./types.js";

type SizedInfo = DbSizeInfo | ViewSizeInfo | GeoSizeInfo;

/** What one check saw, and how many update events had been heard when it was asked for. */
export interface Observation {
  readonly atMs: number;
  readonly info: SizedInfo;
}

/** Per update event, smoothed over checks. */
export interface Growth {
  readonly fileBytesPerUpdate: number;
  readonly activeBytesPerUpdate: number;
  readonly seqPerUpdate: number;
  /** Update events between the two checks that taught it last: how far the evidence reaches (check-schedule.ts, `updatesBeforeLook`). */
  readonly learntOverUpdates: number;
}

/** Weight of the newest measurement: recent behaviour counts most, one odd check does not rule. */
const SMOOTHING = 0.5;

const smooth = (old: number | undefined, next: number): number => (old === undefined ? next : old + SMOOTHING * (next - old));

/**
 * Learn from two checks with `updates` events heard between them. A file that
 * shrank was compacted (by us or someone else): nothing to learn from that pair.
 */
export const learnGrowth = (previous: Observation, next: Observation, updates: number, old: Growth | undefined): Growth | undefined => {
  if (updates <= 0 || next.info.fileBytes < previous.info.fileBytes) return old;
  const seqDelta = next.info.kind === "db" && previous.info.kind === "db" ? next.info.updateSeq - previous.info.updateSeq : 0;
  return {
    fileBytesPerUpdate: smooth(old?.fileBytesPerUpdate, (next.info.fileBytes - previous.info.fileBytes) / updates),
    activeBytesPerUpdate: smooth(old?.activeBytesPerUpdate, (next.info.activeBytes - previous.info.activeBytes) / updates),
    seqPerUpdate: smooth(old?.seqPerUpdate, Math.max(0, seqDelta) / updates),
    learntOverUpdates: updates,
  };
};

/** The sizes `updates` more events would give, if the object keeps growing as it did. */
export const projectInfo = (info: SizedInfo, growth: Growth, updates: number): SizedInfo => {
  const fileBytes = Math.max(0, info.fileBytes + growth.fileBytesPerUpdate * updates);
  const activeBytes = Math.max(0, info.activeBytes + growth.activeBytesPerUpdate * updates);
  // Only a db's seq feeds a rule (min_changes); index files keep theirs as seen.
  if (info.kind !== "db") return { ...info, fileBytes, activeBytes };
  return { ...info, fileBytes, activeBytes, updateSeq: info.updateSeq + growth.seqPerUpdate * updates };
};

const worthIt = (channels: readonly ChannelConfig[], info: ObjectInfo): boolean => channels.some((c) => channelPriority(c, info) > 0);

/** Beyond this many updates a prediction is not worth making: the time cap looks again anyway. */
export const NEVER = Number.POSITIVE_INFINITY;
const HORIZON_UPDATES = 1 << 24;

/**
 * How many more update events until some channel takes the object (0: it
 * already qualifies; NEVER: not within the horizon, or it does not grow).
 * The exact priority rule decides, at sizes projected by `growth`: a doubling
 * search brackets the crossing, then a binary search finds it (priority is
 * monotone in the updates over the range that matters: below max_size and max_priority).
 */
export const updatesUntilWorthIt = (channels: readonly ChannelConfig[], info: SizedInfo, growth: Growth): number => {
  if (worthIt(channels, info)) return 0;
  const guess = closedFormGuess(channels, info, growth);
  // The closed form is exact for the plain thresholds; the rule itself confirms it (quantization,
  // max_size, max_priority or min_changes can move the answer), else the search decides.
  if (worthIt(channels, projectInfo(info, growth, guess)) && !worthIt(channels, projectInfo(info, growth, guess - 1))) return guess;
  if (guess === NEVER && !worthIt(channels, projectInfo(info, growth, HORIZON_UPDATES))) return NEVER;
  return searchUpdates(channels, info, growth);
};

/**
 * The first update count at which a ratio or slack channel's size and
 * priority thresholds are both passed, from the linear projection: a few
 * divisions instead of a search (this runs for every check answer).
 */
const closedFormGuess = (channels: readonly ChannelConfig[], info: SizedInfo, growth: Growth): number => {
  let best = NEVER;
  for (const channel of channels) {
    // An upgrade channel's priority does not grow with updates (a file's format is what it is), so it
    // sets no crossing; where it would after all (the empty-file quirk), the rule's own confirmation fails.
    if (channel.priority === "upgrade") continue;
    const sizeN = firstAbove(info.fileBytes, growth.fileBytesPerUpdate, channel.minSizeBytes);
    const priorityN =
      channel.priority === "ratio"
        ? firstAbove(info.fileBytes - channel.minPriority * info.activeBytes, growth.fileBytesPerUpdate - channel.minPriority * growth.activeBytesPerUpdate, 0)
        : firstAbove(info.fileBytes - info.activeBytes, growth.fileBytesPerUpdate - growth.activeBytesPerUpdate, channel.minPriority);
    best = Math.min(best, Math.max(sizeN, priorityN, 1));
  }
  return best > HORIZON_UPDATES ? NEVER : best;
};

/** The smallest n >= 0 with `start + perUpdate * n > threshold` (NEVER if it does not grow past it). */
const firstAbove = (start: number, perUpdate: number, threshold: number): number => {
  if (start > threshold) return 0;
  if (perUpdate <= 0) return NEVER;
  return Math.floor((threshold - start) / perUpdate) + 1;
};

const searchUpdates = (channels: readonly ChannelConfig[], info: SizedInfo, growth: Growth): number => {
  let high = 1;
  while (high <= HORIZON_UPDATES && !worthIt(channels, projectInfo(info, growth, high))) high *= 2;
  if (high > HORIZON_UPDATES) return NEVER;
  let low = high / 2;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (worthIt(channels, projectInfo(info, growth, mid))) high = mid;
    else low = mid;
  }
  return high;
};

/** Bytes a compaction would reclaim if `updates` more events came: what a check of it may gain. */
export const expectedReclaimBytes = (info: SizedInfo, growth: Growth | undefined, updates: number): number => {
  const projected = growth === undefined ? info : projectInfo(info, growth, updates);
  return Math.max(0, projected.fileBytes - projected.activeBytes);
};
