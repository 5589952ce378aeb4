/**
 * ken's `should_start_job/2`, verbatim, as a pure function. `active` is the
 * number of builds running (ken's `A`); `dbSeq` the db's seq now (`Seq`);
 * `entry` the index's row in the job table, if it has one.
 *
 * A new job (no entry):
 *   - starts while `active < batch_channels`;
 *   - else, while `active < batch_channels + incremental_channels`, only when
 *     its backlog `dbSeq - indexSeq` is below `max_incremental_updates`;
 * A job that ran before (an entry, not running):
 *   - starts while `active < batch_channels` when at least `batch_size`
 *     changes came since its last start, or more than `delay` ms passed;
 *   - else, while `active < total`, when fewer than `max_incremental_updates`
 *     changes came since and more than `delay` ms passed.
 * A running job never starts again (never two builds of one index).
 *
 * A refusal says why, so the caller can wait for the right moment (a free
 * channel, a batch channel, or `lastRunMs + delay`) instead of ken's 60 s.
 */
import { totalChannels, type IndexingConfig } from "./config.js";
import type { Channel } from "./types.js";

/** The job table's row of one index (ken's `#job{seq, lru, worker_pid}`). */
export interface JobEntry {
  /** The db seq when it last started. */
  readonly seq: number;
  /** When it last started (ken's `lru`). */
  readonly lastRunMs: number;
  readonly running: boolean;
}

export interface StartQuestion {
  readonly entry: JobEntry | undefined;
  readonly dbSeq: number;
  /** Where the index stands; needed only for a new job in an incremental channel (unknown counts as nothing built). */
  readonly indexSeq: number | undefined;
  readonly active: number;
  readonly nowMs: number;
}

export type Refusal = "running" | "no-room" | "backlog" | "too-soon";

export type StartAnswer =
  | { readonly start: true; readonly channel: Channel }
  | { readonly start: false; readonly reason: Refusal; /** too-soon: when the rule will say yes (given room). */ readonly retryAtMs?: number };

type KenRule = Pick<IndexingConfig, "batchChannels" | "incrementalChannels" | "maxIncrementalUpdates" | "batchSize" | "kenDelayMs">;

export function shouldStartJob(q: StartQuestion, config: KenRule): StartAnswer {
  const total = totalChannels(config);
  const { entry, active: a, dbSeq } = q;
  if (entry === undefined) {
    if (a < config.batchChannels) return { start: true, channel: "batch" };
    if (a < total) {
      const backlog = dbSeq - (q.indexSeq ?? 0);
      return backlog < config.maxIncrementalUpdates ? { start: true, channel: "incremental" } : { start: false, reason: "backlog" };
    }
    return { start: false, reason: "no-room" };
  }
  if (entry.running) return { start: false, reason: "running" };
  const deltaMs = q.nowMs - entry.lastRunMs;
  const since = dbSeq - entry.seq;
  if (a < config.batchChannels && since >= config.batchSize) return { start: true, channel: "batch" };
  if (a < config.batchChannels && deltaMs > config.kenDelayMs) return { start: true, channel: "batch" };
  if (a < total && since < config.maxIncrementalUpdates && deltaMs > config.kenDelayMs) return { start: true, channel: "incremental" };
  if (a >= total) return { start: false, reason: "no-room" };
  if (a >= config.batchChannels && since >= config.maxIncrementalUpdates) return { start: false, reason: "backlog" };
  return { start: false, reason: "too-soon", retryAtMs: entry.lastRunMs + config.kenDelayMs + 1 };
}
