/**
 * What `GET /_upholster/status` and `upholster status` show of the indexer:
 * the queue, the builds per channel, and per index its lag (db seq minus
 * index seq, as last learnt) and state; the deploys. Pure: built from the
 * state on demand.
 */
import { isoOfEpochMs } from "../shared/iso-time.js";
import { deployRecords, isActive, type DeployPhase } from "./deploy.js";
import { isFresh } from "./jobs.js";
import { priorityClassOf, type PriorityClass } from "./priority.js";
import type { IndexingState, KnownIndex } from "./state.js";
import type { IndexingMetrics, IndexState } from "./types.js";

export interface IndexStatus {
  readonly db: string;
  readonly type: string;
  readonly name: string;
  readonly ddocs: readonly string[];
  readonly state: IndexState;
  readonly dbSeq: number;
  /** null: not known yet. */
  readonly indexSeq: number | null;
  readonly lag: number | null;
  readonly priority: PriorityClass;
  readonly error?: string;
}

export interface DeployStatus {
  readonly db: string;
  readonly ddoc: string;
  readonly stage: string;
  readonly phase: DeployPhase;
  readonly requestedAt: string;
  readonly updatedAt: string;
  /** How far the stage's indexes are behind (while building). */
  readonly lag?: number;
  readonly indexes?: number;
  readonly error?: string;
}

export interface IndexingStatus {
  readonly enabled: boolean;
  /** `catch-up` (upholster) or `seed` (ken's 60 s resubmit, `catch_up = false`). */
  readonly mode: "catch-up" | "seed";
  readonly queue: { readonly pending: number; readonly queued: number; readonly inspecting: number; readonly retrying: number; readonly waiting: number };
  readonly channels: {
    readonly batch: { readonly active: number; readonly limit: number };
    readonly incremental: { readonly active: number; readonly limit: number };
  };
  /** Every index known, most behind first, at most `maxIndexes` of them (`indexCount` says how many there are). */
  readonly indexes: readonly IndexStatus[];
  readonly indexCount: number;
  readonly deploys: readonly DeployStatus[];
}

const stateOf = (state: IndexingState, known: KnownIndex): IndexState => {
  if (state.jobs.get(known.key)?.runningJobId !== undefined) return "building";
  if (known.gaveUp) return "failed";
  if (state.waiting.has(known.key)) return known.failures > 0 ? "retrying" : "waiting";
  return isFresh(known) ? "fresh" : "behind";
};

const lagOf = (known: KnownIndex): number | null => (known.indexSeq === undefined ? null : Math.max(0, known.dbSeq - known.indexSeq));

export const indexStatusOf = (state: IndexingState, known: KnownIndex, nowMs: number): IndexStatus => ({
  db: known.db,
  type: known.spec.type,
  name: known.spec.name,
  ddocs: known.spec.ddocs,
  state: stateOf(state, known),
  dbSeq: known.dbSeq,
  indexSeq: known.indexSeq ?? null,
  lag: lagOf(known),
  priority: priorityClassOf(state, known.db, known.spec.ddocs, nowMs),
  ...(known.lastError !== undefined && known.failures > 0 ? { error: known.lastError } : {}),
});

const byLag = (a: IndexStatus, b: IndexStatus): number => (b.lag ?? Number.MAX_SAFE_INTEGER) - (a.lag ?? Number.MAX_SAFE_INTEGER) || (a.db < b.db ? -1 : a.db > b.db ? 1 : 0);

export const indexingStatus = (state: IndexingState, nowMs: number, maxIndexes = 1000): IndexingStatus => {
  const { config } = state;
  const running = [...state.running.values()];
  const indexes = state.known.entries().map(([, known]) => indexStatusOf(state, known, nowMs));
  return {
    enabled: config.enabled,
    mode: config.catchUp ? "catch-up" : "seed",
    queue: {
      pending: state.pending.size,
      queued: state.queue.size,
      inspecting: state.inspections.size,
      retrying: state.dbRetries.size,
      waiting: state.waiting.size,
    },
    channels: {
      batch: { active: running.filter((job) => job.channel === "batch").length, limit: config.batchChannels },
      incremental: { active: running.filter((job) => job.channel === "incremental").length, limit: config.incrementalChannels },
    },
    indexes: indexes.sort(byLag).slice(0, maxIndexes),
    indexCount: indexes.length,
    deploys: deployRecords(state)
      .sort((a, b) => Number(isActive(b)) - Number(isActive(a)) || b.updatedAtMs - a.updatedAtMs)
      .map((record) => ({
        db: record.db,
        ddoc: record.ddoc,
        stage: record.stageId,
        phase: record.phase,
        requestedAt: isoOfEpochMs(record.requestedAtMs),
        updatedAt: isoOfEpochMs(record.updatedAtMs),
        ...(record.lag !== undefined ? { lag: record.lag } : {}),
        ...(record.indexes !== undefined ? { indexes: record.indexes } : {}),
        ...(record.error !== undefined ? { error: record.error } : {}),
      })),
  };
};

export const indexingMetrics = (state: IndexingState): IndexingMetrics => state.metrics;

/** The indexes of a db (of one design doc, when given) as last learnt. */
export const knownIndexesOf = (state: IndexingState, db: string, ddoc?: string): KnownIndex[] =>
  (state.dbIndexes.get(db) ?? [])
    .map((key) => state.known.get(key))
    .filter((known): known is KnownIndex => known !== undefined && (ddoc === undefined || known.spec.ddocs.includes(ddoc)));
