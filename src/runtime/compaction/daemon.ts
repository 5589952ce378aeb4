/**
 * The compaction daemon: the shell around the pure smoosh core.
 *
 * A reducer host keeps the core's state and steps it with every event (store
 * events, timer ticks, answers to its requests, operator commands); the
 * effects it returns are carried out by the pieces beside this file: info
 * fetches (batched), jobs, listings, the tick timer and the snapshot store.
 * Each of them catches: a store call that fails becomes an event for the core,
 * so one bad database never stops the loop.
 *
 * Geo index files (optional `geoFiles`) are compaction objects too: their
 * growth notifications are updates, they are listed with a db's design docs,
 * sized and compacted through `GeoIndexFiles`. Without it nothing changes.
 *
 * Time comes only from the injected Scheduler, so the same code runs on wall
 * time and on a VirtualScheduler (tests, simulations, benchmarks).
 */
import {
  activeJobs,
  DEFAULT_DBS_PER_INFO_REQUEST,
  initSmoosh,
  smooshMetrics,
  smooshStatus,
  step,
  type SmooshConfig,
  type SmooshEffect,
  type SmooshEvent,
  type SmooshMetrics,
  type SmooshState,
  type SmooshStatus,
} from "../../core/compaction/index.js";
import { designDocId } from "../../core/shared/names.js";
import { errorText } from "../../core/shared/error-text.js";
import type { EventSource, StoreEvent } from "../../ports/events.js";
import type { GeoIndexFiles } from "../../ports/geo.js";
import type { Logger, Scheduler, StatePort } from "../../ports/shell.js";
import type { CompactionStore } from "../../ports/store.js";
import { createInFlight } from "../in-flight.js";
import { createReducerHost } from "../reducer-host.js";
import { createTickTimer } from "../tick-timer.js";
import { createFetchBatcher } from "./fetch-batcher.js";
import { createJobRunner } from "./job-runner.js";
import { listDbs, listDesignDocs } from "./listings.js";
import { createSnapshotStore } from "./persistence.js";
import { createUpdateCoalescer } from "./update-coalescer.js";

export interface CompactionDaemonOptions {
  readonly store: CompactionStore;
  readonly scheduler: Scheduler;
  readonly config: SmooshConfig;
  readonly logger: Logger;
  /** Where queues are checkpointed when `[smoosh] persist = true`. */
  readonly state?: StatePort | undefined;
  /**
   * Standalone use: the daemon follows this source itself. Under
   * `createUpholster` the composition root fans events out instead and calls
   * `handleStoreEvent`.
   */
  readonly events?: EventSource | undefined;
  /** upholster's geo index files, compacted through the view channels. */
  readonly geoFiles?: GeoIndexFiles | undefined;
}

export type JobSummary = ReturnType<typeof activeJobs>[number];

export interface CompactionDaemon {
  /** Create the channels (paused for `wait_secs`), restore persisted queues, follow `events` if given. */
  start(): Promise<void>;
  /** Clear timers, stop following events, wait for in-flight effect handlers. Running store jobs are left alone. */
  stop(): Promise<void>;
  /** CouchDB 3.4's `/_smoosh/status` shape. */
  status(): SmooshStatus;
  metrics(): SmooshMetrics;
  /** Jobs the daemon started or adopted that have not ended. */
  jobs(): readonly JobSummary[];
  suspend(): void;
  resume(): void;
  /** Empty every channel's queue. */
  flush(): void;
  /** Check a db (or one of its view groups: `ddoc` with or without `_design/`) now, ignoring staleness. */
  enqueue(db: string, ddoc?: string): void;
  enqueueAll(scope: "dbs" | "views"): void;
  reconfigure(config: SmooshConfig): void;
  handleStoreEvent(event: StoreEvent): void;
  /** Resolves once no effect handler is in flight (tests and simulations step with this). */
  whenIdle(): Promise<void>;
  isRunning(): boolean;
  /** The core's current state, read-only: for simulations that check invariants against it. */
  inspect(): SmooshState;
}

export function createCompactionDaemon(options: CompactionDaemonOptions): CompactionDaemon {
  const { store, scheduler, events, geoFiles } = options;
  const logger = options.logger.child?.({ subsystem: "smoosh" }) ?? options.logger;
  // The store, not the INI, says whether the core looks at running jobs for it, and how many dbs a request reads.
  const withStoreLooks = (c: SmooshConfig): SmooshConfig => ({
    ...c,
    jobLookIntervalMs: store.jobLookIntervalMs ?? 0,
    dbsPerInfoRequest: store.dbInfosBatchSize ?? DEFAULT_DBS_PER_INFO_REQUEST,
  });
  let config = withStoreLooks(options.config);
  const inFlight = createInFlight(logger, "smoosh");
  const dispatch = (event: SmooshEvent): void => host.dispatch(event);
  /** A store that learnt a smaller `_dbs_info` batch from the server (too_many_keys): the core packs its checks to it from then on. */
  const followStoreBatch = (): void => {
    const batch = store.dbInfosBatchSize ?? DEFAULT_DBS_PER_INFO_REQUEST;
    if (batch === config.dbsPerInfoRequest) return;
    config = { ...config, dbsPerInfoRequest: batch };
    dispatch({ type: "config-changed", config });
  };
  const fetchInfo = createFetchBatcher(
    store,
    inFlight,
    (answer) => {
      followStoreBatch();
      dispatch(answer);
    },
    geoFiles,
  );
  const jobs = createJobRunner(store, inFlight, logger, dispatch, geoFiles);
  const tickTimer = createTickTimer(scheduler, () => dispatch({ type: "tick" }));
  const snapshots = options.state === undefined ? undefined : createSnapshotStore(options.state, inFlight, logger);
  const updates = createUpdateCoalescer(dispatch, scheduler);
  let stopGeoGrowth: (() => void) | undefined;

  const performOne = (effect: SmooshEffect): void => {
    switch (effect.type) {
      case "fetch-info":
        return fetchInfo(effect);
      case "start-job":
        return jobs.start(effect.jobId, effect.object, effect.adopt);
      case "suspend-job":
        return jobs.control(effect.jobId, "suspend");
      case "resume-job":
        return jobs.control(effect.jobId, "resume");
      case "cancel-job":
        return jobs.control(effect.jobId, "cancel");
      case "list-dbs":
        return inFlight.track(listDbs(store, effect.purpose, dispatch));
      case "list-design-docs":
        return inFlight.track(listDesignDocs(store, effect.db, effect.purpose, dispatch, geoFiles));
      case "schedule-tick":
        return tickTimer.schedule(effect.atMs);
      case "persist":
        if (config.persist) snapshots?.save(effect.snapshot);
        return;
      case "log":
        return logger[effect.level](effect.fields, effect.msg);
    }
  };

  // Built at once so status() answers before start(); rebuilt at start() so wait_secs counts from then.
  const host = createReducerHost<SmooshState, SmooshEvent, SmooshEffect>({
    initial: initSmoosh(config, scheduler.nowMs()).state,
    step,
    scheduler,
    logger,
    perform: (effects) => effects.forEach(performOne),
  });

  const restore = async (): Promise<void> => {
    if (snapshots === undefined || !config.persist) return;
    const snapshot = await snapshots.load();
    if (snapshot !== undefined) dispatch({ type: "state-restored", snapshot });
  };

  return {
    async start() {
      if (host.isOpen()) return;
      host.setOpen(true);
      host.reset(initSmoosh(config, scheduler.nowMs()));
      await restore();
      stopGeoGrowth = geoFiles?.onGrowth((db, signature) => updates.noteUpdate({ kind: "geo", db, signature }));
      if (events !== undefined) await events.start((event) => updates.handle(event));
    },
    async stop() {
      if (!host.isOpen()) return;
      stopGeoGrowth?.();
      stopGeoGrowth = undefined;
      updates.flush();
      host.setOpen(false);
      tickTimer.cancel();
      if (events !== undefined) {
        try {
          await events.stop();
        } catch (error) {
          logger.warn({ err: errorText(error) }, "the event source did not stop cleanly");
        }
      }
      await inFlight.whenIdle();
      logger.info({ runningJobs: jobs.runningCount() }, "smoosh stopped");
    },
    status: () => smooshStatus(host.state()),
    metrics: () => smooshMetrics(host.state()),
    jobs: () => activeJobs(host.state()),
    suspend: () => dispatch({ type: "suspend" }),
    resume: () => dispatch({ type: "resume" }),
    flush: () => dispatch({ type: "flush" }),
    enqueue: (db, ddoc) => {
      updates.flush();
      dispatch({
        type: "object-updated",
        object: ddoc === undefined ? { kind: "db", db } : { kind: "view", db, ddoc: designDocId(ddoc) },
        force: true,
      });
    },
    enqueueAll: (scope) => dispatch({ type: "enqueue-all", scope }),
    reconfigure: (next) => {
      config = withStoreLooks(next);
      dispatch({ type: "config-changed", config });
    },
    handleStoreEvent: (event) => updates.handle(event),
    whenIdle: () => {
      updates.flush();
      return inFlight.whenIdle();
    },
    isRunning: () => host.isOpen(),
    inspect: () => host.state(),
  };
}
