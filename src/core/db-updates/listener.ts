/**
 * The listener (CouchDB's `global_changes_listener`) as a pure state machine
 * over an explicit clock: db events become keys, collected in a set (repeats
 * collapse) and released together `maxEventDelayMs` after the first one.
 * Events of the feed's own db are ignored (writing the feed would otherwise
 * feed itself forever). With `updateDb` false, events are dropped.
 *
 * Overflow: when the set holds `maxPendingKeys` distinct keys, it is released
 * at once (early) instead of growing: nothing is lost, the writer bounds.
 */
import { addKey, batchKeys, batchSize, dueAtMs, emptyBatch, isDue, type Batch } from "./batch.js";
import { encodeKey, type EventKey } from "./keys.js";

export interface ListenerSettings {
  readonly updateDb: boolean;
  readonly maxEventDelayMs: number;
  readonly maxPendingKeys: number;
  /** The feed db: its own events are ignored. */
  readonly feedDbName: string;
}

export interface ListenerState {
  readonly settings: ListenerSettings;
  readonly batch: Batch;
}

export type ListenerInput =
  | { readonly type: "db-event"; readonly key: EventKey }
  | { readonly type: "tick" }
  /** Release everything now (graceful stop). */
  | { readonly type: "flush" }
  | { readonly type: "configure"; readonly settings: ListenerSettings };

export interface ListenerOutput {
  readonly state: ListenerState;
  /** Keys to hand to the writer now. */
  readonly released: readonly string[];
  /** When to tick next; undefined: nothing pending. */
  readonly wakeAtMs: number | undefined;
}

export const initialListenerState = (settings: ListenerSettings): ListenerState => ({ settings, batch: emptyBatch() });

export function listenerStep(state: ListenerState, input: ListenerInput, nowMs: number): ListenerOutput {
  switch (input.type) {
    case "db-event": {
      if (!state.settings.updateDb || input.key.db === state.settings.feedDbName) return settle(state, nowMs);
      const batch = addKey(state.batch, encodeKey(input.key), nowMs);
      if (batchSize(batch) >= state.settings.maxPendingKeys) return release({ ...state, batch });
      return settle({ ...state, batch }, nowMs);
    }
    case "tick":
      return settle(state, nowMs);
    case "flush":
      return batchSize(state.batch) > 0 ? release(state) : settle(state, nowMs);
    case "configure": {
      // Turning update_db off clears pending state, as the seed does.
      const batch = input.settings.updateDb ? state.batch : emptyBatch();
      return settle({ settings: input.settings, batch }, nowMs);
    }
  }
}

export const listenerPendingCount = (state: ListenerState): number => batchSize(state.batch);

function settle(state: ListenerState, nowMs: number): ListenerOutput {
  if (isDue(state.batch, state.settings.maxEventDelayMs, nowMs)) return release(state);
  return { state, released: [], wakeAtMs: dueAtMs(state.batch, state.settings.maxEventDelayMs) };
}

function release(state: ListenerState): ListenerOutput {
  return { state: { ...state, batch: emptyBatch() }, released: batchKeys(state.batch), wakeAtMs: undefined };
}
