/**
 * The compaction daemon: the shell around the pure smoosh core.
 *
 * It holds the core's state, feeds it events (store events, timer ticks,
 * answers to its requests, operator commands) and carries out the effects it
 * returns through the ports. Every effect handler catches: a store call that
 * fails becomes an event for the core (`info-failed`, `job-start-failed`, ...),
 * so one bad database never stops the loop.
 *
 * Time comes only from the injected Scheduler, so the same code runs on wall
 * time and on a VirtualScheduler (tests, simulations, benchmarks).
 */
import {
  activeJobs,
  initSmoosh,
  smooshMetrics,
  smooshStatus,
  step,
  type CompactionObject,
  type SmooshConfig,
  type SmooshEffect,
  type SmooshEvent,
  type SmooshMetrics,
  type SmooshState,
  type SmooshStatus,
} from "../core/compaction/index.js";
import type { EventSource, StoreEvent } from "../ports/events.js";
import type { Logger, Scheduler, StatePort } from "../ports/shell.js";
import type { CompactionStore, JobHandle } from "../ports/store.js";
import { designDocId, errorText } from "./compaction/infos.js";
import { fetchInfos, type FetchInfoEffect } from "./compaction/fetch-info.js";
import { decodeSnapshot, encodeSnapshot, SMOOSH_STATE_KEY } from "./compaction/snapshot-io.js";
import { storeEventToSmooshEvent } from "./compaction/store-events.js";

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
}

export function createCompactionDaemon(options: CompactionDaemonOptions): CompactionDaemon {
  const { store, scheduler, state: statePort, events } = options;
  const logger = options.logger.child?.({ subsystem: "smoosh" }) ?? options.logger;
  let config = options.config;
  // Built at once so status() answers before start(); rebuilt at start() so wait_secs counts from then.
  let core: SmooshState = initSmoosh(config, scheduler.nowMs()).state;
  let running = false;
  let tickTimer: { readonly atMs: number; readonly cancel: () => void } | undefined;
  const handles = new Map<number, JobHandle>();
  const inFlight = new Set<Promise<void>>();
  const reportedIncapable = new Set<string>();
  // Saves are chained so an older snapshot never lands after a newer one.
  let saveChain: Promise<void> = Promise.resolve();

  const track = (work: Promise<void>): void => {
    const tracked = work.catch((error: unknown) => {
      // Handlers catch their own failures; this is the last guard so the loop never dies.
      logger.error({ err: errorText(error) }, "smoosh effect handler failed");
    });
    inFlight.add(tracked);
    void tracked.finally(() => inFlight.delete(tracked));
  };

  const dispatch = (event: SmooshEvent): void => {
    if (!running) return;
    let result;
    try {
      result = step(core, event, scheduler.nowMs());
    } catch (error) {
      // A core bug must not take the daemon down; the event is dropped and said so.
      logger.error({ event: event.type, err: errorText(error) }, "smoosh core rejected an event");
      return;
    }
    core = result.state;
    perform(result.effects);
  };

  // Info fetches asked for during one synchronous burst (a bulk write emits
  // many events in a row) go out together a microtask later: one `dbInfos`
  // call instead of many, and each reads the db after the whole burst, not
  // after its first write.
  let fetchBatch: FetchInfoEffect[] | undefined;
  const queueFetch = (effect: FetchInfoEffect): void => {
    if (fetchBatch !== undefined) {
      fetchBatch.push(effect);
      return;
    }
    const batch: FetchInfoEffect[] = [effect];
    fetchBatch = batch;
    track(
      Promise.resolve().then(() => {
        fetchBatch = undefined;
        return fetchInfos(store, batch, dispatch);
      }),
    );
  };

  const perform = (effects: readonly SmooshEffect[]): void => {
    for (const effect of effects) {
      if (effect.type === "fetch-info") queueFetch(effect);
      else performOne(effect);
    }
  };

  const performOne = (effect: Exclude<SmooshEffect, FetchInfoEffect>): void => {
    switch (effect.type) {
      case "start-job":
        track(startJob(effect.jobId, effect.object, effect.adopt));
        return;
      case "suspend-job":
        jobControl(effect.jobId, "suspend");
        return;
      case "resume-job":
        jobControl(effect.jobId, "resume");
        return;
      case "cancel-job":
        jobControl(effect.jobId, "cancel");
        return;
      case "list-dbs":
        track(listDbs(effect.purpose));
        return;
      case "list-design-docs":
        track(listDesignDocs(effect.db, effect.purpose));
        return;
      case "schedule-tick":
        scheduleTick(effect.atMs);
        return;
      case "persist":
        persist(effect.snapshot);
        return;
      case "log":
        logger[effect.level](effect.fields, effect.msg);
        return;
    }
  };

  const startJob = async (jobId: number, object: CompactionObject, adopt: boolean): Promise<void> => {
    let handle: JobHandle;
    try {
      handle = adopt ? await store.attachJob(object) : await store.startJob(object);
    } catch (error) {
      dispatch({ type: "job-start-failed", jobId, error: errorText(error) });
      return;
    }
    handles.set(jobId, handle);
    dispatch({ type: "job-started", jobId });
    // Not tracked as in flight: a compaction may run for hours and stop() must not wait for it.
    handle.done.then(
      (outcome) => {
        handles.delete(jobId);
        dispatch(
          outcome.ok
            ? { type: "job-finished", jobId, ...(outcome.reclaimedBytes !== undefined ? { reclaimedBytes: outcome.reclaimedBytes } : {}) }
            : { type: "job-failed", jobId, error: outcome.reason },
        );
      },
      (error: unknown) => {
        // The port says `done` never rejects; an adapter that does anyway is treated as a failure.
        handles.delete(jobId);
        dispatch({ type: "job-failed", jobId, error: errorText(error) });
      },
    );
  };

  const jobControl = (jobId: number, action: "suspend" | "resume" | "cancel"): void => {
    const handle = handles.get(jobId);
    if (handle === undefined) return; // ended meanwhile
    const control = handle[action];
    if (control === undefined) {
      // CouchDB's HTTP API cannot pause or abort a compaction: say so once, not on every window close.
      if (!reportedIncapable.has(action)) {
        reportedIncapable.add(action);
        logger.warn({ action }, `the store cannot ${action} compaction jobs; running jobs continue`);
      }
      return;
    }
    track(
      control.call(handle).catch((error: unknown) => {
        logger.warn({ action, jobId, err: errorText(error) }, `could not ${action} a compaction job`);
      }),
    );
  };

  const listDbs = async (purpose: Parameters<typeof listDbsEvent>[0]): Promise<void> => {
    let dbs: string[];
    try {
      dbs = await store.listDbs();
    } catch (error) {
      dispatch({ type: "list-failed", purpose, error: errorText(error) });
      return;
    }
    dispatch(listDbsEvent(purpose, dbs));
  };

  const listDesignDocs = async (db: string, purpose: Parameters<typeof listDbsEvent>[0]): Promise<void> => {
    let ddocs: string[];
    try {
      ddocs = (await store.designDocs(db)).map((ddoc) => ddoc.id);
    } catch (error) {
      dispatch({ type: "list-failed", purpose, db, error: errorText(error) });
      return;
    }
    dispatch({ type: "design-docs-listed", purpose, db, ddocs });
  };

  /** One timer at a time, for the latest time the core asked for. */
  const scheduleTick = (atMs: number): void => {
    if (tickTimer?.atMs === atMs) return;
    tickTimer?.cancel();
    tickTimer = undefined;
    if (!Number.isFinite(atMs)) return;
    const timer = {
      atMs,
      cancel: scheduler.setTimeout(
        () => {
          if (tickTimer === timer) tickTimer = undefined;
          dispatch({ type: "tick" });
        },
        Math.max(0, atMs - scheduler.nowMs()),
      ),
    };
    tickTimer = timer;
  };

  const persist = (snapshot: Parameters<typeof encodeSnapshot>[0]): void => {
    if (statePort === undefined || !config.persist) return;
    const port = statePort;
    saveChain = saveChain.then(async () => {
      try {
        await port.save(SMOOSH_STATE_KEY, encodeSnapshot(snapshot));
      } catch (error) {
        logger.warn({ err: errorText(error) }, "could not save the smoosh state; will try at the next checkpoint");
      }
    });
    track(saveChain);
  };

  const restore = async (): Promise<void> => {
    if (statePort === undefined || !config.persist) return;
    let raw: unknown;
    try {
      raw = await statePort.load(SMOOSH_STATE_KEY);
    } catch (error) {
      logger.warn({ err: errorText(error) }, "could not load the saved smoosh state; starting with empty queues");
      return;
    }
    if (raw === undefined) return;
    const decoded = decodeSnapshot(raw);
    if (decoded._tag === "Left") {
      logger.warn({ errors: decoded.left }, "ignoring a saved smoosh state that does not decode; starting with empty queues");
      return;
    }
    dispatch({ type: "state-restored", snapshot: decoded.right });
  };

  const whenIdle = async (): Promise<void> => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  };

  return {
    async start() {
      if (running) return;
      running = true;
      const init = initSmoosh(config, scheduler.nowMs());
      core = init.state;
      perform(init.effects);
      await restore();
      if (events !== undefined) await events.start((event) => dispatch(storeEventToSmooshEvent(event)));
    },
    async stop() {
      if (!running) return;
      running = false;
      tickTimer?.cancel();
      tickTimer = undefined;
      if (events !== undefined) {
        try {
          await events.stop();
        } catch (error) {
          logger.warn({ err: errorText(error) }, "the event source did not stop cleanly");
        }
      }
      await whenIdle();
      logger.info({ runningJobs: handles.size }, "smoosh stopped");
    },
    status: () => smooshStatus(core),
    metrics: () => smooshMetrics(core),
    jobs: () => activeJobs(core),
    suspend: () => dispatch({ type: "suspend" }),
    resume: () => dispatch({ type: "resume" }),
    flush: () => dispatch({ type: "flush" }),
    enqueue: (db, ddoc) =>
      dispatch({
        type: "object-updated",
        object: ddoc === undefined ? { kind: "db", db } : { kind: "view", db, ddoc: designDocId(ddoc) },
        force: true,
      }),
    enqueueAll: (scope) => dispatch({ type: "enqueue-all", scope }),
    reconfigure: (next) => {
      config = next;
      dispatch({ type: "config-changed", config: next });
    },
    handleStoreEvent: (event) => dispatch(storeEventToSmooshEvent(event)),
    whenIdle,
    isRunning: () => running,
  };
}

const listDbsEvent = (purpose: Extract<SmooshEvent, { type: "dbs-listed" }>["purpose"], dbs: readonly string[]): SmooshEvent => ({
  type: "dbs-listed",
  purpose,
  dbs,
});
