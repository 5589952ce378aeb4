/**
 * Applying a new configuration at run time, and dropping a db's objects.
 */
import { configuredChannels, type SmooshConfig } from "./config.js";
import { createChannel, reconfigureChannel } from "./channel.js";
import { queueItems, queueRemove } from "./queue.js";
import { isKeyOfDb } from "./object.js";
import { forgetDb, rescheduleDirty } from "./checks.js";
import { withLimit } from "./check-queues.js";
import { log, setChannel, update, type ChannelState, type Draft } from "./state.js";
import type { DbName } from "./types.js";

/** Drop every queued, waiting or retrying object of `db`. Running jobs are left to end on their own. */
export const dropDb = (d: Draft, db: DbName): void => {
  for (const [name, channel] of d.state.channels) {
    const doomed = queueItems(channel.queue).filter((item) => item.value.db === db);
    if (doomed.length === 0) continue;
    const queue = doomed.reduce((q, item) => queueRemove(q, item.key), channel.queue);
    setChannel(d, name, { ...channel, queue });
  }
  const retries = d.state.retries
    .entries()
    .filter((entry) => entry.value.object.db === db)
    .reduce((r, entry) => r.delete(entry.key), d.state.retries);
  forgetDb(d, (key) => isKeyOfDb(key, db));
  update(d, {
    pendingListings: d.state.pendingListings.filter((_key, listing) => listing.db !== db),
    rescanListings: d.state.rescanListings.delete(db),
    ddocCounts: d.state.ddocCounts.delete(db),
    retries,
    failures: d.state.failures
      .entries()
      .filter(([key]) => isKeyOfDb(key, db))
      .reduce((f, [key]) => f.delete(key), d.state.failures),
  });
};

/**
 * Channels removed from the lists are dropped with their queues (their
 * running jobs stay tracked until they end, so concurrency stays honest),
 * new ones start paused for `wait_secs`, kept ones take the new settings.
 */
export const applyConfig = (d: Draft, config: SmooshConfig): void => {
  const before = d.state.channels;
  const wasIgnored = d.state.ignored;
  const wanted = configuredChannels(config);
  const channels = new Map<string, ChannelState>();
  update(d, { config, ignored: new Set(config.ignoredDbs) });
  for (const channelConfig of wanted) {
    const old = before.get(channelConfig.name);
    if (old !== undefined && old.config.kind === channelConfig.kind) {
      channels.set(channelConfig.name, old);
    } else {
      channels.set(channelConfig.name, createChannel(channelConfig, d.nowMs, config.waitSecs));
      log(d, "info", "smoosh: channel created", { channel: channelConfig.name, kind: channelConfig.kind });
    }
  }
  for (const [name, old] of before) {
    const kept = channels.get(name);
    if (kept === undefined || kept !== old) {
      log(d, "info", "smoosh: channel removed", { channel: name, discarded: old.queue.tree.length });
    }
  }
  update(d, { channels });
  for (const channelConfig of wanted) {
    const channel = d.state.channels.get(channelConfig.name);
    if (channel !== undefined) reconfigureChannel(d, channel, channelConfig);
  }
  const rescanAtMs = d.nowMs + config.rescanIntervalSecs * 1000;
  update(d, {
    checks: withLimit(d.state.checks, config.maxPendingChecks),
    pendingListings: d.state.pendingListings.withLimit(config.maxPendingChecks),
    rescanListings: d.state.rescanListings.withLimit(config.maxPendingChecks),
    nextRescanAtMs:
      config.rescanIntervalSecs === 0 ? undefined : Math.min(d.state.nextRescanAtMs ?? rescanAtMs, rescanAtMs),
    nextCheckpointAtMs: config.persist ? (d.state.nextCheckpointAtMs ?? d.nowMs + config.checkpointSecs * 1000) : undefined,
  });
  for (const db of config.ignoredDbs) if (!wasIgnored.has(db)) dropDb(d, db);
  // New intervals, staleness or queues: a dirty object's next look is where the new policy puts it.
  rescheduleDirty(d);
};
