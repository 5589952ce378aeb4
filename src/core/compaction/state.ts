/**
 * The reducer's state, and the draft a step works on: a shallow copy whose
 * fields are replaced (never mutated), plus the effects emitted so far.
 * Large collections are persistent (see persistent.ts, queue.ts), so a step
 * costs O(log n) however many databases there are; the small maps (jobs,
 * fetches in flight: bounded by concurrency and `max_info_requests`) are
 * plain copies.
 */
import type { CheckBudget } from "./check-budget.js";
import type { CheckQueues } from "./check-queues.js";
import type { Watch } from "./check-schedule.js";
import type { ChannelConfig, SmooshConfig } from "./config.js";
import type { BoundedFifo, PMap, TimedKeys } from "../shared/persistent.js";
import type { PriorityQueue } from "./queue.js";
import type { CompactionObject, DbName, ListPurpose, LogLevel, ObjectInfo, SmooshEffect, SmooshMetrics } from "./types.js";

export interface ChannelState {
  readonly config: ChannelConfig;
  readonly queue: PriorityQueue<CompactionObject>;
  /** Channels start paused (CouchDB's `wait_secs`) to observe before choosing. */
  readonly pausedUntilMs: number;
}

/**
 * `precheck`: taken from the queue, priority being re-checked (counts as
 * CouchDB's "starting"); `starting`: start-job emitted; `active`: running.
 */
export type JobPhase = "precheck" | "starting" | "active";

export interface Job {
  readonly jobId: number;
  readonly channel: string;
  readonly object: CompactionObject;
  readonly key: string;
  /** The priority it was queued with (put back at it if it cannot start after all). */
  readonly priority: number;
  readonly phase: JobPhase;
  readonly adopted: boolean;
  /** A suspend-job was emitted and not yet undone. */
  readonly suspended: boolean;
  /** When the core next reads a running db job's info for the store (`jobLookIntervalMs`; see job-looks.ts). */
  readonly nextLookAtMs?: number | undefined;
  /** When it became active (started or adopted): the waits between its looks grow with its running time (look-delay.ts). */
  readonly activeSinceMs?: number | undefined;
}

/** A db read that may stand in for its start's precheck while fresh (job-looks.ts). */
export interface RecentRead {
  readonly info: ObjectInfo;
  readonly answeredAtMs: number;
}

export interface PendingListing {
  readonly db: DbName;
  readonly purpose: ListPurpose;
}

/** The check policy's memory of one object (see check-schedule.ts). */
export interface WatchEntry extends Watch {
  readonly object: CompactionObject;
}

/** A check request out: its object and the request it travels in (a batch of dbs is one). */
export interface Fetch {
  readonly object: CompactionObject;
  readonly batchId: number;
  /** Update events heard before it was asked for: growth is learnt from them. */
  readonly updates: number;
}

export interface RetryEntry {
  readonly object: CompactionObject;
  readonly attempt: number;
}

export interface SmooshState {
  readonly config: SmooshConfig;
  readonly ignored: ReadonlySet<DbName>;
  /** In configured order: db channels, view channels, cleanup channels. */
  readonly channels: ReadonlyMap<string, ChannelState>;
  /** Every job in any phase, including jobs of channels removed by a config change. */
  readonly jobs: ReadonlyMap<number, Job>;
  /** Object key -> job id: an object never runs twice. */
  readonly runningKeys: ReadonlyMap<string, number>;
  /** Checks in flight: request id -> fetch, object key -> request id, batch id -> answers still to come. */
  readonly fetches: ReadonlyMap<number, Fetch>;
  readonly fetchingKeys: ReadonlyMap<string, number>;
  readonly batchesInFlight: ReadonlyMap<number, number>;
  /**
   * Forced checks (operator enqueue, due retry) that arrived while a check of
   * the same object was in flight: its answer may predate them, so they run
   * again once it lands. A subset of `fetchingKeys`, so bounded by it.
   */
  readonly recheckKeys: ReadonlySet<string>;
  /** Looks ahead in flight (request id -> channel and key): at most one a channel. */
  readonly aheadFetches: ReadonlyMap<number, { readonly channel: string; readonly key: string }>;
  /** With `jobLookIntervalMs`: db reads of the last interval, by key, that may stand in for a precheck. */
  readonly recentReads: ReadonlyMap<string, RecentRead>;
  /** Only reads asked for from this request id on are remembered: the first id after the last suspend or resume. */
  readonly readsFromId: number;
  /** The check policy: what it knows of each object (bounded by `max_pending_checks`). */
  readonly watches: PMap<WatchEntry>;
  /** Objects waiting to be checked: forced, due (by the policy's time), background (check-queues.ts). */
  readonly checks: CheckQueues;
  /** The global limit on check requests. */
  readonly budget: CheckBudget;
  /** Tokens spent on due work since background work last had one (see BACKGROUND_SHARE). */
  readonly dueTokensInARow: number;
  /** Dbs waiting to have their design docs listed, and listings in flight. */
  readonly pendingListings: BoundedFifo<PendingListing>;
  readonly listingsInFlight: ReadonlyMap<string, PendingListing>;
  /** Dbs a rescan will list the design docs of, under the budget. */
  readonly rescanListings: BoundedFifo<DbName>;
  /** Design docs per db at its last listing (absent: never listed); rescans skip dbs with none. */
  readonly ddocCounts: PMap<number>;
  /** Failed objects waiting for their back-off, keyed by when they are due. */
  readonly retries: TimedKeys<RetryEntry>;
  /** Consecutive failures per object; reset when a job of it finishes. */
  readonly failures: PMap<number>;
  readonly suspended: boolean;
  /** Source of request and job ids (one sequence: they never collide). */
  readonly nextId: number;
  readonly metrics: SmooshMetrics;
  readonly nextRescanAtMs: number | undefined;
  readonly nextCheckpointAtMs: number | undefined;
  /** The tick the shell holds a timer for (undefined after a tick fired), so it is asked again only when needed. */
  readonly scheduledTickAtMs: number | undefined;
}

export interface Step {
  readonly state: SmooshState;
  readonly effects: readonly SmooshEffect[];
}

/**
 * A step in progress. Its `state` is the step's own shallow copy, made once
 * by `draftOf`: `update` replaces fields of that copy in place (copying the
 * whole state per field change cost a fifth of a simulation), and the state
 * the step was given is never touched.
 */
export interface Draft {
  readonly state: SmooshState;
  readonly nowMs: number;
  readonly effects: SmooshEffect[];
  /**
   * Objects whose check was answered in this step (scratch, dropped with the
   * draft): only such an answer may stand in for a precheck. An equal
   * timestamp is no proof: on a real clock two steps often share a millisecond.
   */
  readonly checkedThisStep: Set<string>;
}

export const draftOf = (state: SmooshState, nowMs: number): Draft => ({ state: { ...state }, nowMs, effects: [], checkedThisStep: new Set() });

export const update = (d: Draft, patch: Partial<SmooshState>): void => {
  Object.assign(d.state, patch);
};

export const emit = (d: Draft, effect: SmooshEffect): void => {
  d.effects.push(effect);
};

export const log = (d: Draft, level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void => {
  d.effects.push({ type: "log", level, msg, fields });
};

export const bump = (d: Draft, metric: keyof SmooshMetrics, by = 1): void => {
  update(d, { metrics: { ...d.state.metrics, [metric]: d.state.metrics[metric] + by } });
};

export const takeId = (d: Draft): number => {
  const id = d.state.nextId;
  update(d, { nextId: id + 1 });
  return id;
};

export const setChannel = (d: Draft, name: string, channel: ChannelState): void => {
  const channels = new Map(d.state.channels);
  channels.set(name, channel);
  update(d, { channels });
};

export const zeroMetrics: SmooshMetrics = {
  enqueued: 0,
  started: 0,
  adopted: 0,
  finished: 0,
  failed: 0,
  retried: 0,
  gaveUp: 0,
  skippedAtStart: 0,
  bytesReclaimed: 0,
  droppedAtCapacity: 0,
};

export const isIgnored = (state: SmooshState, object: CompactionObject): boolean => state.ignored.has(object.db);
