/**
 * The demo workload of `upholster run` on the in-memory store: a few dbs
 * (half with views) that churn — mostly rewrites, some deletes — so a
 * newcomer sees smoosh at work with CouchDB's default channels; and every
 * 20 s one db is deleted and created again, so `/_db_updates` shows
 * `deleted` and `created` rows, not only `updated`.
 *
 * Tuning: the dbs are pre-filled before the daemon's first scan, so they
 * already qualify (file > min_size 1 MiB, file/active > 2.0) when the
 * channels unpause after `wait_secs` (30 s): the first compactions start
 * about 30 s after `npm start`. The steady churn makes compacted dbs qualify
 * again within minutes; they are re-checked once `staleness` (5 min) passed.
 */
import { createWorkload, type Workload } from "../adapters/memory/workload.js";
import type { MemoryStore } from "../adapters/memory/index.js";
import type { Logger, Scheduler } from "../ports/shell.js";

export interface DemoOptions {
  readonly store: MemoryStore;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  /** Same seed, same writes. */
  readonly seed?: number;
}

export interface PreparedDemo {
  readonly dbs: readonly string[];
  prefill(): void;
  start(): void;
  stop(): void;
}

export const DEMO_SETTINGS = {
  dbCount: 6,
  dbPrefix: "demo-",
  writesPerSecond: 300,
  updateFraction: 0.75,
  deleteFraction: 0.05,
  docSizeBytes: 1000,
  ddocFraction: 0.5,
  maxDocsPerDb: 1500,
  recreateDbEveryMs: 20_000,
  /** Operations applied before the daemon's first scan (a few seconds of CPU, ~25 MB written). */
  prefillOperations: 24_000,
} as const;

export function createDemoWorkload(options: DemoOptions): Workload {
  const { prefillOperations: _prefill, ...settings } = DEMO_SETTINGS;
  return createWorkload({ store: options.store, scheduler: options.scheduler, random: options.seed ?? 20261121, ...settings });
}

/**
 * The demo in two steps: `prefill()` BEFORE upholster starts (so smoosh's
 * first look at each db sees it already big, not the first tiny write, which
 * staleness would then shield from re-checks for 5 minutes), `start()` after.
 */
export function prepareDemo(options: DemoOptions): PreparedDemo {
  const workload = createDemoWorkload(options);
  return {
    dbs: workload.dbs,
    prefill() {
      workload.setup();
      workload.step(DEMO_SETTINGS.prefillOperations);
    },
    start() {
      workload.start();
      options.logger.info({ dbs: workload.dbs, writesPerSecond: DEMO_SETTINGS.writesPerSecond }, "demo workload running");
    },
    stop: () => workload.stop(),
  };
}
