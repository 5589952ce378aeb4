/**
 * The writer (CouchDB's `global_changes_server`) as a pure state machine:
 * released keys collect in a set and are written `maxWriteDelayMs` after the
 * first one, one write in flight at a time.
 *
 * Better than CouchDB (which spawns the write and forgets it): a failed write
 * puts its keys back (collapsing with newer ones) and retries after a capped
 * exponential back-off, so a store outage delays events instead of losing
 * them. Memory is bounded by `maxPendingKeys` distinct keys (pending plus in
 * flight); past it, NEW keys are dropped and reported (keys already pending
 * are kept: a repeat of a pending key costs nothing and loses nothing).
 */
import { addKey, addKeys, batchHas, batchSize, dueAtMs, dueNow, emptyBatch, firstKeys, isDue, removeKeys, type Batch } from "./batch.js";
import { cappedExponentialMs } from "../shared/backoff.js";

export interface WriterSettings {
  readonly updateDb: boolean;
  readonly maxWriteDelayMs: number;
  readonly maxPendingKeys: number;
  readonly maxWriteBatch: number;
  readonly retryInitialDelayMs: number;
  readonly retryMaxDelayMs: number;
}

export interface WriterState {
  readonly settings: WriterSettings;
  readonly pending: Batch;
  /** Keys being written now. */
  readonly inFlight: readonly string[] | undefined;
  /** Consecutive failed writes (0 when healthy). */
  readonly failures: number;
  /** No write before this time (back-off after a failure). */
  readonly retryAtMs: number | undefined;
}

export type WriterInput =
  | { readonly type: "keys"; readonly keys: readonly string[] }
  | { readonly type: "tick" }
  /** Write everything pending now, ignoring the window and any back-off (graceful stop). */
  | { readonly type: "flush" }
  /** The write of the in-flight keys ended; `failed` lists the keys not written. */
  | { readonly type: "write-finished"; readonly failed: readonly string[] }
  | { readonly type: "configure"; readonly settings: WriterSettings };

export interface WriterOutput {
  readonly state: WriterState;
  /** Write these keys now (at most one write in flight). */
  readonly write: readonly string[] | undefined;
  /** Keys refused because the bound was reached. */
  readonly dropped: readonly string[];
  /** When to tick next; undefined: nothing to do until an input arrives. */
  readonly wakeAtMs: number | undefined;
}

export const initialWriterState = (settings: WriterSettings): WriterState => ({
  settings,
  pending: emptyBatch(),
  inFlight: undefined,
  failures: 0,
  retryAtMs: undefined,
});

/** Capped exponential back-off: initial, 2x, 4x, ... up to the max. */
export const retryDelayMs = (settings: WriterSettings, failures: number): number =>
  cappedExponentialMs(settings.retryInitialDelayMs, settings.retryMaxDelayMs, failures - 1);

export function writerStep(state: WriterState, input: WriterInput, nowMs: number): WriterOutput {
  switch (input.type) {
    case "keys": {
      if (!state.settings.updateDb) return settle(state, nowMs, input.keys);
      let pending = state.pending;
      const dropped: string[] = [];
      const inFlightCount = state.inFlight?.length ?? 0;
      for (const key of input.keys) {
        if (!batchHas(pending, key) && batchSize(pending) + inFlightCount >= state.settings.maxPendingKeys) {
          dropped.push(key);
        } else {
          pending = addKey(pending, key, nowMs);
        }
      }
      return settle({ ...state, pending }, nowMs, dropped);
    }
    case "tick":
      return settle(state, nowMs, []);
    case "flush":
      if (state.inFlight !== undefined || batchSize(state.pending) === 0) return settle(state, nowMs, []);
      return startWrite({ ...state, retryAtMs: undefined }, nowMs, []);
    case "write-finished": {
      if (input.failed.length === 0) {
        return settle({ ...state, inFlight: undefined, failures: 0, retryAtMs: undefined }, nowMs, []);
      }
      const failures = state.failures + 1;
      // Failed keys rejoin the set: a newer event for the same key collapses with them.
      const pending = addKeys(state.pending, input.failed, nowMs);
      const retryAtMs = nowMs + retryDelayMs(state.settings, failures);
      return settle({ ...state, pending, inFlight: undefined, failures, retryAtMs }, nowMs, []);
    }
    case "configure": {
      const pending = input.settings.updateDb ? state.pending : emptyBatch();
      const retryAtMs = input.settings.updateDb ? state.retryAtMs : undefined;
      return settle({ ...state, settings: input.settings, pending, retryAtMs }, nowMs, []);
    }
  }
}

export const writerPendingCount = (state: WriterState): number => batchSize(state.pending);

function settle(state: WriterState, nowMs: number, dropped: readonly string[]): WriterOutput {
  if (state.inFlight !== undefined || batchSize(state.pending) === 0) {
    return { state, write: undefined, dropped, wakeAtMs: undefined };
  }
  if (state.retryAtMs !== undefined) {
    // Backing off: the retry time replaces the batch window.
    if (nowMs < state.retryAtMs) return { state, write: undefined, dropped, wakeAtMs: state.retryAtMs };
    return startWrite({ ...state, retryAtMs: undefined }, nowMs, dropped);
  }
  if (isDue(state.pending, state.settings.maxWriteDelayMs, nowMs)) return startWrite(state, nowMs, dropped);
  return { state, write: undefined, dropped, wakeAtMs: dueAtMs(state.pending, state.settings.maxWriteDelayMs) };
}

function startWrite(state: WriterState, nowMs: number, dropped: readonly string[]): WriterOutput {
  const write = firstKeys(state.pending, state.settings.maxWriteBatch);
  // Keys beyond one batch stay pending and are due at once (written right after this write finishes).
  const pending = write.length === batchSize(state.pending) ? emptyBatch() : dueNow(removeKeys(state.pending, write), nowMs - state.settings.maxWriteDelayMs);
  return { state: { ...state, pending, inFlight: write }, write, dropped, wakeAtMs: undefined };
}
