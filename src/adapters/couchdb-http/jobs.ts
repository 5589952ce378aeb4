/**
 * Watching a compaction on the server until it ends. CouchDB's HTTP API cannot
 * pause or abort one, so the handle has only `done`.
 *
 * Done when the object's info says `compact_running: false` and
 * `/_active_tasks` lists no compaction task for it. Both are checked because
 * `compact_running` flips at once but a task may lag or outlive it per shard
 * (fixtures 37, 38, 47). Servers without `compact_running` (PouchDB Server)
 * run it inside the request handler's process with no progress report: there
 * the job is done once the file size stays the same for two polls in a row.
 *
 * A poll costs nothing when someone else reads the db anyway: the daemon
 * reads each running db compaction every interval, with its channel's next
 * db (core/compaction/job-looks.ts), and its batched checks carry running
 * compactions' dbs along (`_dbs_info`, 100 dbs a request). So a db's
 * watcher wakes on such an info, and asks by itself only when none came
 * (bench:churn on CouchDB 3.4.3: about one `GET /{db}` per compaction
 * before, besides the one the start made). Its polls space out as the
 * compaction runs on, by the rule the daemon's looks follow
 * (core/compaction/look-delay.ts): every interval while it is young, then
 * a quarter of its running time, at most a minute.
 */
import type { JobHandle, JobOutcome } from "../../ports/store.js";
import type { Logger, Scheduler } from "../../ports/shell.js";
import { lookDelayMs } from "../../core/compaction/look-delay.js";
import type { ActiveTask } from "./decoders.js";
import { errorMessage } from "./errors.js";
import { sleep } from "./timers.js";

export interface ProbedSize {
  readonly fileBytes: number;
  readonly running: boolean | undefined;
  readonly updateSeq?: number | undefined;
}

export interface CompactionProbe {
  /**
   * `undefined`: the object is gone. `running: undefined`: the server does not say.
   * An answer read by anyone since `freshSinceMs` may stand in for a request.
   */
  readonly info: (freshSinceMs: number) => Promise<ProbedSize | undefined>;
  readonly tasks: () => Promise<readonly ActiveTask[]>;
  readonly matchesTask: (task: ActiveTask) => boolean;
  /** Resolves when anyone reads the object's info, or after `maxWaitMs`. Without it, polls are a plain sleep. */
  readonly waitForNews?: (maxWaitMs: number) => Promise<void>;
  /** Called once when the compaction has ended well, with what the last poll saw (record the compacted seq). */
  readonly onFinished?: (last: ProbedSize) => Promise<void>;
}

export interface WatchOptions {
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  /** The wait between polls while the compaction is young; it grows as it runs on (look-delay.ts). */
  readonly pollIntervalMs: number;
  /** Consecutive failed polls (server unreachable...) before the job is reported failed. */
  readonly maxConsecutiveFailures: number;
  /** Polls of an unchanging size before a server without `compact_running` counts as done. */
  readonly stablePolls: number;
  readonly label: string;
}

export const watchCompaction = (probe: CompactionProbe, options: WatchOptions, fileBytesBefore: number | undefined): JobHandle => {
  const run = async (): Promise<JobOutcome> => {
    let failures = 0;
    let stable = 0;
    let lastSize = fileBytesBefore;
    let sawRunning = false;
    const watchedSinceMs = options.scheduler.nowMs();
    let lastPollAtMs = watchedSinceMs;
    for (;;) {
      const waitMs = lookDelayMs(options.scheduler.nowMs() - watchedSinceMs, options.pollIntervalMs);
      await (probe.waitForNews?.(waitMs) ?? sleep(options.scheduler, waitMs));
      try {
        const info = await probe.info(lastPollAtMs + 1);
        lastPollAtMs = options.scheduler.nowMs();
        if (info === undefined) return { ok: false, reason: `${options.label} no longer exists` };
        failures = 0;
        let finished: boolean;
        if (info.running === undefined && info.fileBytes <= 0) {
          // No size reported this time (PouchDB Server, for a moment; db info maps that to 0):
          // no evidence either way, so it neither counts as stable nor ends the job.
          finished = false;
        } else if (info.running === undefined) {
          stable = lastSize === info.fileBytes ? stable + 1 : 0;
          lastSize = info.fileBytes;
          finished = stable >= options.stablePolls;
        } else if (info.running) {
          sawRunning = true;
          finished = false;
        } else if (sawRunning || (fileBytesBefore !== undefined && info.fileBytes < fileBytesBefore)) {
          // Seen running, or the file shrank (only the swap at its end does that): it has ended.
          finished = true;
        } else {
          // Not running and no sign it ran: it may not have begun yet (compact_running lags the
          // request), or it ended between two polls without shrinking anything. The task list says.
          const tasks = await probe.tasks();
          finished = !tasks.some(probe.matchesTask);
        }
        if (finished) {
          await probe.onFinished?.(info);
          const reclaimedBytes = fileBytesBefore === undefined ? undefined : Math.max(0, fileBytesBefore - info.fileBytes);
          return { ok: true, reclaimedBytes };
        }
      } catch (e) {
        failures += 1;
        if (failures >= options.maxConsecutiveFailures) {
          return { ok: false, reason: `lost track of ${options.label}: ${errorMessage(e)}` };
        }
      }
    }
  };
  const done = run().catch((e: unknown): JobOutcome => ({ ok: false, reason: errorMessage(e) }));
  return { done };
};

/** `shards/00000000-7fffffff/fx_db.1795281095` belongs to `fx_db`. */
export const taskDbName = (database: string): string => /^shards\/[0-9a-f]+-[0-9a-f]+\/(.+)\.[0-9]+$/.exec(database)?.[1] ?? database;
