/**
 * Everything driven by time rather than by events: staleness pruning,
 * periodic rescans and checkpoints, and the one `schedule-tick` that asks the
 * shell to wake the core at the next moment something is due.
 */
import { takeSnapshot } from "./persistence.js";
import { emit, update, type Draft, type SmooshState } from "./state.js";
import { nextWindowBoundaryMs } from "./window.js";

/** Forget checks older than `staleness`: they no longer hold anything back. */
export const pruneStaleness = (d: Draft): void => {
  const cutoffMs = d.nowMs - d.state.config.stalenessMinutes * 60_000 - 1;
  const earliest = d.state.checkedAt.earliest();
  if (earliest === undefined || earliest.atMs > cutoffMs) return;
  update(d, { checkedAt: d.state.checkedAt.takeUntil(cutoffMs).rest });
};

/** upholster extension: list every db now and then, so quiet dbs are looked at too. */
export const maybeRescan = (d: Draft): void => {
  const { nextRescanAtMs, config } = d.state;
  if (nextRescanAtMs === undefined || d.nowMs < nextRescanAtMs) return;
  update(d, { nextRescanAtMs: config.rescanIntervalSecs > 0 ? d.nowMs + config.rescanIntervalSecs * 1000 : undefined });
  emit(d, { type: "list-dbs", purpose: "rescan" });
};

export const maybeCheckpoint = (d: Draft): void => {
  const { nextCheckpointAtMs, config } = d.state;
  if (nextCheckpointAtMs === undefined || d.nowMs < nextCheckpointAtMs) return;
  update(d, { nextCheckpointAtMs: config.persist ? d.nowMs + config.checkpointSecs * 1000 : undefined });
  emit(d, { type: "persist", snapshot: takeSnapshot(d.state, d.nowMs) });
};

/** The earliest future time the core has something to do, if any. */
export const nextWakeMs = (state: SmooshState, nowMs: number): number | undefined => {
  const times: number[] = [];
  for (const channel of state.channels.values()) {
    if (channel.pausedUntilMs > nowMs) times.push(channel.pausedUntilMs);
    const boundary = nextWindowBoundaryMs(channel.config.window, nowMs);
    if (boundary !== undefined) times.push(boundary);
  }
  const retry = state.retries.earliest();
  if (retry !== undefined) times.push(retry.atMs);
  if (state.nextRescanAtMs !== undefined) times.push(state.nextRescanAtMs);
  if (state.nextCheckpointAtMs !== undefined) times.push(state.nextCheckpointAtMs);
  const future = times.filter((t) => t > nowMs);
  return future.length === 0 ? undefined : Math.min(...future);
};

/**
 * Ask for a tick when the wanted time differs from the timer the shell holds
 * (it keeps only the latest request; after a `tick` it holds none).
 */
export const scheduleTick = (d: Draft): void => {
  const atMs = nextWakeMs(d.state, d.nowMs);
  if (atMs === undefined || atMs === d.state.scheduledTickAtMs) return;
  update(d, { scheduledTickAtMs: atMs });
  emit(d, { type: "schedule-tick", atMs });
};
