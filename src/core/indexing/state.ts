/**
 * The reducer's state, and the draft a step works on: a shallow copy whose
 * fields are replaced (never mutated), plus the effects emitted so far.
 * Collections that grow with the number of dbs or indexes are persistent
 * (PMap, TimedKeys, BoundedFifo), so a step costs O(log n); the small ones
 * (builds running, inspections and deploys in flight) are plain copies.
 */
import { BoundedFifo, PMap, TimedKeys } from "../shared/persistent.js";
import { seedPrng, type PrngState } from "../shared/prng.js";
import type { IndexingConfig } from "./config.js";
import type { Deploy } from "./deploy.js";
import type { Channel, DbName, IndexingEffect, IndexingMetrics, IndexSpec, ListedDesignDoc, LogLevel } from "./types.js";

/** An index waiting for a channel (or for its back-off, or ken's `delay`). */
export interface Candidate {
  readonly key: string;
  readonly db: DbName;
  readonly spec: IndexSpec;
  /** The db's seq when last seen: the build's target. */
  readonly dbSeq: number;
  readonly indexSeq: number | undefined;
  /** Waiting since (priorities age from here). */
  readonly sinceMs: number;
  /** Not started before this (a back-off, or ken's `delay` after its last run). */
  readonly notBeforeMs: number;
  /** Ties go by this draw from the PRNG (design docs in random order, as ken). */
  readonly tieBreak: number;
}

export interface RunningJob {
  readonly jobId: number;
  readonly key: string;
  readonly db: DbName;
  readonly spec: IndexSpec;
  readonly channel: Channel;
  readonly targetSeq: number;
  readonly startedAtMs: number;
  /** The job table row before this start, restored if the build fails (a failed run covers nothing). */
  readonly previous: { readonly seq: number; readonly lastRunMs: number } | undefined;
}

/** ken's job table row (see should-start.ts), plus the running job's id. */
export interface JobRow {
  readonly seq: number;
  readonly lastRunMs: number;
  readonly runningJobId: number | undefined;
}

/** What the core knows of an index, for freshness and status. */
export interface KnownIndex {
  readonly key: string;
  readonly db: DbName;
  readonly spec: IndexSpec;
  readonly dbSeq: number;
  readonly indexSeq: number | undefined;
  readonly failures: number;
  readonly lastFailureAtMs: number | undefined;
  readonly lastError: string | undefined;
  /** Non-transient failures past `retry_max_attempts`: retried only when the db changes. */
  readonly gaveUp: boolean;
  readonly lastBuiltAtMs: number | undefined;
}

/** A db waiting to be looked at again: `resubmit`, the seed's fixed delays; `retry`, upholster's back-off. */
export interface DbRetry {
  readonly why: "resubmit" | "retry";
}

export interface IndexingState {
  readonly config: IndexingConfig;
  readonly ignored: ReadonlySet<DbName>;
  readonly languages: ReadonlySet<string>;
  readonly prng: PrngState;
  /** The RFC's pending updates: db -> time of its FIRST update since it was last taken. */
  readonly pending: TimedKeys<true>;
  readonly lastSweepAtMs: number;
  /** ken's de-duplicated FIFO of dbs to look at. */
  readonly queue: BoundedFifo<true>;
  /** Inspections in flight: request id -> db, and db -> request id. */
  readonly inspections: ReadonlyMap<number, DbName>;
  readonly inspectingDbs: ReadonlyMap<DbName, number>;
  /** Dbs asked for again while being inspected: queued once that inspection ends. */
  readonly again: ReadonlySet<DbName>;
  /** Dbs to look at again at a time (resubmits, retries). */
  readonly dbRetries: TimedKeys<DbRetry>;
  /** Failed inspections in a row, per db (reset by a successful one). */
  readonly dbFailures: PMap<number>;
  /** Dbs whose stale index files are to be cleaned once they have been looked at. */
  readonly cleanupDue: ReadonlySet<DbName>;
  readonly cleanups: ReadonlyMap<number, DbName>;
  /** The design docs last listed per db (cleanup needs them all). */
  readonly designDocs: PMap<readonly ListedDesignDoc[]>;
  readonly known: PMap<KnownIndex>;
  /** db -> the keys of its indexes, as last inspected. */
  readonly dbIndexes: PMap<readonly string[]>;
  readonly jobs: PMap<JobRow>;
  readonly running: ReadonlyMap<number, RunningJob>;
  readonly waiting: PMap<Candidate>;
  /** `db \0 ddoc` -> when it was last queried. */
  readonly queried: TimedKeys<true>;
  /** `db \0 ddoc` or `db \0` (every index of the db) -> when the operator asked. */
  readonly hints: PMap<number>;
  readonly deploys: ReadonlyMap<string, Deploy>;
  readonly nextId: number;
  readonly nextPruneAtMs: number;
  readonly scheduledTickAtMs: number | undefined;
  readonly metrics: IndexingMetrics;
}

export interface Draft {
  state: IndexingState;
  readonly nowMs: number;
  readonly effects: IndexingEffect[];
}

export interface Step {
  readonly state: IndexingState;
  readonly effects: readonly IndexingEffect[];
}

export const zeroMetrics: IndexingMetrics = {
  dbsQueued: 0,
  inspections: 0,
  inspectFailures: 0,
  buildsStarted: 0,
  buildsFinished: 0,
  buildsFailed: 0,
  refusals: 0,
  resubmits: 0,
  catchUps: 0,
  cleanups: 0,
  droppedAtCapacity: 0,
  deploysDone: 0,
  deploysFailed: 0,
};

export const initialState = (config: IndexingConfig, nowMs: number, seed: number): IndexingState => ({
  config,
  ignored: new Set(config.ignoredDbs),
  languages: new Set(config.allowedLanguages),
  prng: seedPrng(seed),
  pending: TimedKeys.empty(),
  lastSweepAtMs: Number.NEGATIVE_INFINITY,
  queue: BoundedFifo.empty(config.maxQueuedDbs),
  inspections: new Map(),
  inspectingDbs: new Map(),
  again: new Set(),
  dbRetries: TimedKeys.empty(),
  dbFailures: PMap.empty(),
  cleanupDue: new Set(),
  cleanups: new Map(),
  designDocs: PMap.empty(),
  known: PMap.empty(),
  dbIndexes: PMap.empty(),
  jobs: PMap.empty(),
  running: new Map(),
  waiting: PMap.empty(),
  queried: TimedKeys.empty(),
  hints: PMap.empty(),
  deploys: new Map(),
  nextId: 1,
  nextPruneAtMs: nowMs + config.pruneIntervalMs,
  scheduledTickAtMs: undefined,
  metrics: zeroMetrics,
});

export const update = (d: Draft, patch: Partial<IndexingState>): void => {
  d.state = { ...d.state, ...patch };
};

export const emit = (d: Draft, effect: IndexingEffect): void => {
  d.effects.push(effect);
};

export const log = (d: Draft, level: LogLevel, msg: string, fields: Readonly<Record<string, unknown>>): void => {
  d.effects.push({ type: "log", level, msg, fields });
};

export const count = (d: Draft, metric: keyof IndexingMetrics, by = 1): void => {
  update(d, { metrics: { ...d.state.metrics, [metric]: d.state.metrics[metric] + by } });
};

/** A fresh id for a request or a job. */
export const nextId = (d: Draft): number => {
  const id = d.state.nextId;
  update(d, { nextId: id + 1 });
  return id;
};

/** The job table and knowledge are keyed by db, backend and the backend's key. */
export const indexKeyOf = (db: DbName, spec: IndexSpec): string => `${db}\u0000${spec.type}\u0000${spec.key}`;

export const ddocKeyOf = (db: DbName, ddoc: string): string => `${db}\u0000${ddoc}`;

export const copyMap = <K, V>(map: ReadonlyMap<K, V>, change: (m: Map<K, V>) => void): ReadonlyMap<K, V> => {
  const next = new Map(map);
  change(next);
  return next;
};
