/**
 * Everything driven by time rather than by events: periodic rescans and
 * checkpoints, checks that fall due, and the one `schedule-tick` that asks
 * the shell to wake the core at the next moment something is due.
 */
import { nextTokenAtMs } from "./check-budget.js";
import { earliestDueMs } from "./check-queues.js";
import { dueCheckWakeMs } from "./check-wait.js";
import { backgroundCanRun } from "./checks.js";
import { nextLookMs } from "./job-looks.js";
import { takeSnapshot } from "./persistence.js";
import { emit, update, type Draft, type SmooshState } from "./state.js";
import { nextWindowBoundaryMs } from "./window.js";

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
  const lookAtMs = nextLookMs(state);
  if (lookAtMs !== undefined) times.push(Math.max(lookAtMs, nowMs + 1));
  const checkAtMs = nextCheckWakeMs(state, nowMs);
  if (checkAtMs !== undefined) times.push(checkAtMs);
  const future = times.filter((t) => t > nowMs);
  return future.length === 0 ? undefined : Math.min(...future);
};

/**
 * When waiting checks and listings can next go out: at the earliest due
 * time (or wait deadline), but not before the budget has a token. Work
 * waiting for a free request or listing slot needs no tick: the answer that
 * frees it wakes the core.
 */
const nextCheckWakeMs = (state: SmooshState, nowMs: number): number | undefined => {
  const slotFree = state.batchesInFlight.size < state.config.maxInfoRequests;
  const tokenMs = nextTokenAtMs(state.budget, state.config.checkRequestsPerSec);
  const earliestMs = slotFree ? earliestDueMs(state.checks) : undefined;
  // Due checks waiting for a start (check-wait.ts) wake the core at their deadline (a job's end is an event anyway).
  // Asked only once a token is there: until then the token's time is the wake, and the answer costs projections.
  const dueMs = earliestMs !== undefined && earliestMs <= nowMs && tokenMs <= nowMs ? dueCheckWakeMs(state, nowMs) : earliestMs;
  const waitingMs = backgroundCanRun(state) ? nowMs : dueMs;
  if (waitingMs === undefined) return undefined;
  return Math.max(waitingMs, tokenMs, nowMs + 1);
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
