/**
 * The background indexer: the shell around the pure indexing core
 * (src/core/indexing). A reducer host keeps the core's state and steps it
 * with every event (store events, timer ticks, answers to its requests,
 * operator commands); the effects are carried out by the pieces beside this
 * file: inspections, builds (build-runner.ts), cleanups, deploy steps, the
 * tick timer and the saved deploys. Each catches: a failing store call or
 * backend becomes an event for the core, so nothing stops the loop.
 *
 * Time comes only from the injected Scheduler, so the same code runs on
 * wall time and on a VirtualScheduler (tests, simulations, benchmarks).
 */
import {
  deployIdOf,
  deployRefusal,
  indexingMetrics,
  indexingStatus,
  initIndexing,
  isActive,
  sameBody,
  step,
  type DeployStatus,
  type IndexingConfig,
  type IndexingEffect,
  type IndexingEvent,
  type IndexingMetrics,
  type IndexingState,
  type IndexingStatus,
} from "../../core/indexing/index.js";
import { designDocId } from "../../core/shared/names.js";
import { errorText } from "../../core/shared/error-text.js";
import type { StoreEvent } from "../../ports/events.js";
import type { IndexBackend } from "../../ports/index-backend.js";
import type { Logger, Scheduler, StatePort } from "../../ports/shell.js";
import type { CompactionStore } from "../../ports/store.js";
import { createInFlight } from "../in-flight.js";
import { createReducerHost } from "../reducer-host.js";
import { createTickTimer } from "../tick-timer.js";
import { createBuildRunner } from "./build-runner.js";
import { cleanUpIndexes } from "./cleanup.js";
import { runDeployStep, type DeployStore } from "./deploy-steps.js";
import { inspectDb, type InspectStore } from "./inspect.js";
import { liveLag, type IndexLag } from "./lag.js";
import { createDeployPersistence } from "./persistence.js";
import { createBackendRegistry } from "./registry.js";
import { storeEventToIndexingEvent } from "./store-events.js";

export type IndexingStore = InspectStore & DeployStore & Pick<CompactionStore, "listDbs">;

export interface IndexingDaemonOptions {
  readonly store: IndexingStore;
  readonly backends?: readonly IndexBackend[] | undefined;
  readonly scheduler: Scheduler;
  readonly config: IndexingConfig;
  readonly logger: Logger;
  /** Where deploys are saved (a restart resumes them). Absent: they live as long as the process. */
  readonly state?: StatePort | undefined;
  /** Seeds the core's PRNG (sweep jitter, design doc order). Default: random. */
  readonly seed?: number | undefined;
  /** Store names to db names (CouchDB shard objects to their db). Default: as they are. */
  readonly dbNameOf?: ((name: string) => string) | undefined;
  /** Indexes listed in status at most (most behind first). Default 1000. */
  readonly statusMaxIndexes?: number | undefined;
}

/** What a deploy request got: started (or going on already), or refused with a reason. */
export type DeployAnswer = { readonly ok: true; readonly resumed: boolean } | { readonly ok: false; readonly reason: string };

export interface IndexingDaemon {
  start(): Promise<void>;
  /** Clear timers, abort builds in flight (their answers are dropped), wait for effect handlers. */
  stop(): Promise<void>;
  status(): IndexingStatus & { readonly backends: Readonly<Record<string, unknown>> };
  metrics(): IndexingMetrics & { readonly buildsRunning: number };
  /** The RFC's `fabric2_index:register/1`: one backend per type (a second replaces the first). */
  registerBackend(backend: IndexBackend): void;
  /** Look at this db now, past the delay. */
  enqueue(db: string): void;
  /** Operator hint: this design doc's indexes (all of the db's without one) go first until fresh. */
  prioritize(db: string, ddoc?: string): void;
  /** Someone queried this design doc's index: it goes first while the query is recent. */
  noteQuery(db: string, ddoc: string): void;
  /** Each index of the db (or of one design doc) and its lag, asked of the store and backends now. */
  lag(db: string, ddoc?: string): Promise<IndexLag[]>;
  /** Stage `body` as the next version of `ddoc`, build it, swap it in when fresh. */
  deploy(db: string, ddoc: string, body: Readonly<Record<string, unknown>>): DeployAnswer;
  deployStatus(db: string, ddoc: string): DeployStatus | undefined;
  /** False when no deploy of it is in progress, or it is swapping already (too late). */
  cancelDeploy(db: string, ddoc: string): boolean;
  isIgnored(db: string): boolean;
  reconfigure(config: IndexingConfig): void;
  handleStoreEvent(event: StoreEvent): void;
  /** Resolves once no effect handler is in flight (a build that hangs past its timeout excepted). */
  whenIdle(): Promise<void>;
  isRunning(): boolean;
  /** The core's state, read-only: for simulations that check invariants against it. */
  inspect(): IndexingState;
}

export function createIndexingDaemon(options: IndexingDaemonOptions): IndexingDaemon {
  const { store, scheduler } = options;
  const logger = options.logger.child?.({ subsystem: "ken" }) ?? options.logger;
  const dbNameOf = options.dbNameOf ?? ((name: string) => name);
  let config = options.config;
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const inFlight = createInFlight(logger, "ken");
  const registry = createBackendRegistry(logger, options.backends ?? []);
  const dispatch = (event: IndexingEvent): void => host.dispatch(event);
  const tickTimer = createTickTimer(scheduler, () => dispatch({ type: "tick" }));
  const builds = createBuildRunner({ registry, scheduler, inFlight, dispatch, timeoutMs: () => config.buildTimeoutMs });
  const deploys = options.state === undefined ? undefined : createDeployPersistence(options.state, inFlight, logger);
  const answer = (work: Promise<IndexingEvent>): void => inFlight.track(work.then(dispatch));

  const performOne = (effect: IndexingEffect): void => {
    switch (effect.type) {
      case "inspect-db":
        return answer(inspectDb({ store, registry, logger }, effect.requestId, effect.db));
      case "build-index":
        return builds.start(effect);
      case "cancel-build":
        return builds.cancel(effect.jobId);
      case "cleanup-indexes":
        // Not waited for by stop() or whenIdle(): a store's cleanup may be a job that takes its own
        // time (the memory store's, on its scheduler); its answer after a stop is dropped.
        return void cleanUpIndexes(registry, effect).then(dispatch, (error: unknown) => logger.warn({ err: errorText(error) }, "ken: cleanup failed"));
      case "schedule-tick":
        return tickTimer.schedule(effect.atMs);
      case "persist":
        return deploys?.save(effect.deploys);
      case "log":
        return logger[effect.level](effect.fields, effect.msg);
      default:
        return answer(runDeployStep({ store, registry }, effect));
    }
  };

  const host = createReducerHost<IndexingState, IndexingEvent, IndexingEffect>({
    initial: initIndexing(config, scheduler.nowMs(), seed).state,
    step,
    scheduler,
    logger,
    perform: (effects) => effects.forEach(performOne),
  });

  /** Every db, as if written: at start, and when the event source may have missed events. */
  const scanAll = (why: string): void => {
    if (!config.scanOnStart) return;
    inFlight.track(
      store.listDbs().then(
        (dbs) => {
          logger.info({ dbs: dbs.length, why }, "ken: looking at every db");
          for (const db of new Set(dbs.map(dbNameOf))) dispatch({ type: "db-updated", db });
        },
        (error: unknown) => logger.warn({ err: errorText(error), why }, "ken: could not list the dbs; they are looked at as they are written"),
      ),
    );
  };

  return {
    async start() {
      if (host.isOpen()) return;
      host.setOpen(true);
      host.reset(initIndexing(config, scheduler.nowMs(), seed));
      const saved = await deploys?.load();
      if (saved !== undefined && saved.length > 0) dispatch({ type: "deploys-restored", deploys: saved });
      scanAll("start");
    },
    async stop() {
      if (!host.isOpen()) return;
      host.setOpen(false);
      tickTimer.cancel();
      builds.abortAll();
      await inFlight.whenIdle();
      logger.info({}, "ken: stopped");
    },
    status: () => ({
      ...indexingStatus(host.state(), scheduler.nowMs(), options.statusMaxIndexes),
      backends: Object.fromEntries(registry.all().map((backend) => [backend.type, backend.status?.() ?? {}])),
    }),
    metrics: () => ({ ...indexingMetrics(host.state()), buildsRunning: builds.runningCount() }),
    registerBackend: (backend) => registry.register(backend),
    enqueue: (db) => dispatch({ type: "enqueue", db }),
    prioritize: (db, ddoc) => dispatch({ type: "prioritize", db, ddoc: ddoc === undefined ? undefined : designDocId(ddoc) }),
    noteQuery: (db, ddoc) => dispatch({ type: "index-queried", db, ddoc: designDocId(ddoc) }),
    lag: (db, ddoc) => liveLag(store, registry, host.state().languages, db, ddoc === undefined ? undefined : designDocId(ddoc)),
    deploy(db, ddoc, body) {
      const id = designDocId(ddoc);
      const refusal = deployRefusal(host.state(), db, id, body);
      if (refusal !== undefined) return { ok: false, reason: refusal };
      const current = host.state().deploys.get(deployIdOf(db, id));
      const resumed = current !== undefined && isActive(current) && sameBody(current.body, body);
      dispatch({ type: "deploy-requested", db, ddoc: id, body });
      return { ok: true, resumed };
    },
    deployStatus: (db, ddoc) => {
      const id = designDocId(ddoc);
      return indexingStatus(host.state(), scheduler.nowMs(), 0).deploys.find((deploy) => deploy.db === db && deploy.ddoc === id);
    },
    cancelDeploy(db, ddoc) {
      const current = host.state().deploys.get(deployIdOf(db, designDocId(ddoc)));
      if (current === undefined || (current.phase !== "staging" && current.phase !== "building")) return false;
      dispatch({ type: "deploy-cancel", db, ddoc: designDocId(ddoc) });
      return true;
    },
    isIgnored: (db) => host.state().ignored.has(db),
    reconfigure(next) {
      config = next;
      dispatch({ type: "config-changed", config: next });
    },
    handleStoreEvent(event) {
      if (event.type === "source-resumed") return scanAll(`events may have been missed: ${event.reason}`);
      const translated = storeEventToIndexingEvent(event, dbNameOf);
      if (translated !== undefined) dispatch(translated);
    },
    whenIdle: () => inFlight.whenIdle(),
    isRunning: () => host.isOpen(),
    inspect: () => host.state(),
  };
}
