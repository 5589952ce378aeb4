/**
 * A deterministic write workload for the memory store: inserts, updates and
 * deletes over a set of databases (some hotter than others), some with a
 * design doc whose views get indexed. Same seed and same options give the
 * same writes, so simulations and benchmarks are replayable.
 *
 * `start()`/`stop()` write on the scheduler's clock (the demo, real time);
 * `step(n)` applies `n` operations at once (simulations, benchmarks). While
 * started, a db can also be deleted and created again now and then
 * (`recreateDbEveryMs`), so a feed of db events shows more than updates.
 */
import type { Scheduler, CancelTimer } from "../../ports/shell.js";
import type { DbName } from "../../ports/store.js";
import { createRandom, type Random } from "./random.js";
import type { MemoryStore } from "./store.js";

export interface WorkloadOptions {
  readonly store: MemoryStore;
  readonly scheduler: Scheduler;
  /** A seed, or a generator to share with the caller. */
  readonly random: Random | number;
  readonly dbCount: number;
  /** Database names: `<prefix>000`, `<prefix>001`, ... Default `workload-`. */
  readonly dbPrefix?: string;
  /** Operations per second of scheduler time while started. */
  readonly writesPerSecond: number;
  /** Share of operations that rewrite an existing doc (garbage). */
  readonly updateFraction: number;
  /** Share of operations that delete an existing doc (garbage + tombstone). */
  readonly deleteFraction: number;
  /** Approximate JSON size of each doc body. */
  readonly docSizeBytes: number;
  /** Share of databases that get a design doc with views. */
  readonly ddocFraction: number;
  /** Share of operations that rewrite a design doc's views (old index files then await cleanup). Default 0. */
  readonly viewChangeFraction?: number;
  /**
   * Skew of the choice of database: 1 is uniform, larger makes low-numbered
   * dbs hotter (index = floor(count * u^skew)). Default 2.
   */
  readonly skew?: number;
  /** Live docs kept per db at most: inserts turn into updates beyond it (bounds memory). Default 5000. */
  readonly maxDocsPerDb?: number;
  /** How often the started workload writes a batch of due operations, ms. Default 100. */
  readonly tickMs?: number;
  /** Operations a tick may apply at most (catching up after a stall). Default 10,000. */
  readonly maxOperationsPerTick?: number;
  /** While started: every this many ms one db, chosen at random, is deleted and created again, empty. Default: never. */
  readonly recreateDbEveryMs?: number;
}

export interface WorkloadStats {
  readonly operations: number;
  readonly inserts: number;
  readonly updates: number;
  readonly deletes: number;
  readonly viewChanges: number;
  /** Writes the store refused (e.g. a db deleted under the workload); the workload recovers. */
  readonly rejected: number;
  /** Dbs deleted and created again (`recreateDbEveryMs`); not counted in `operations`. */
  readonly dbsRecreated: number;
}

export interface Workload {
  /** Database names this workload writes. */
  readonly dbs: readonly DbName[];
  /** Create the dbs and design docs that are missing (idempotent; `start` and `step` call it). */
  setup(): void;
  start(): void;
  stop(): void;
  /** Apply `n` operations now. */
  step(n: number): WorkloadStats;
  stats(): WorkloadStats;
}

interface DbState {
  readonly name: DbName;
  readonly withViews: boolean;
  /**
   * Live doc ids and their current revs, at the same index: an array for
   * O(1) random pick and swap-remove, and the rev found where the id was
   * picked (a Map of revs per db was a lookup in cold memory per operation).
   */
  readonly ids: string[];
  readonly revs: string[];
  /** `store.deletedDbCount()` when this db was last seen to exist: until it changes, it still does. */
  existsAsOfDeletions: number;
  nextDocNumber: number;
  ddocRev: string | undefined;
  viewGeneration: number;
}

export function createWorkload(options: WorkloadOptions): Workload {
  const { store, scheduler } = options;
  const random = typeof options.random === "number" ? createRandom(options.random) : options.random;
  const prefix = options.dbPrefix ?? "workload-";
  const dbCount = Math.max(1, Math.floor(options.dbCount));
  const skew = Math.max(1, options.skew ?? 2);
  const maxDocsPerDb = Math.max(1, options.maxDocsPerDb ?? 5000);
  const tickMs = Math.max(1, options.tickMs ?? 100);
  const maxOperationsPerTick = Math.max(1, options.maxOperationsPerTick ?? 10_000);
  const viewChangeFraction = options.viewChangeFraction ?? 0;
  const padding = "x".repeat(Math.max(0, options.docSizeBytes - 60));

  const states: DbState[] = Array.from({ length: dbCount }, (_, index) => ({
    name: `${prefix}${String(index).padStart(3, "0")}`,
    withViews: index < Math.round(dbCount * Math.min(1, Math.max(0, options.ddocFraction))),
    ids: [],
    revs: [],
    existsAsOfDeletions: -1,
    nextDocNumber: 0,
    ddocRev: undefined,
    viewGeneration: 0,
  }));
  const counters = { operations: 0, inserts: 0, updates: 0, deletes: 0, viewChanges: 0, rejected: 0, dbsRecreated: 0 };
  let cancelTick: CancelTimer | undefined;
  let cancelRecreate: CancelTimer | undefined;
  let owedOperations = 0;

  const putViews = (state: DbState): void => {
    const result = store.putDesignDoc(
      state.name,
      "_design/workload",
      { views: { by_n: { map: `function (doc) { emit(doc.n, ${state.viewGeneration}); }` } } },
      state.ddocRev,
    );
    if (result.ok) state.ddocRev = result.rev;
    else counters.rejected++;
  };

  const ensure = (state: DbState): void => {
    // Asked of the store only after some db was deleted: a lookup per operation was measurable in bench:simulate.
    const deletions = store.deletedDbCount();
    if (state.existsAsOfDeletions === deletions) return;
    state.existsAsOfDeletions = deletions;
    if (store.dbExists(state.name)) return;
    // Created (again, if someone deleted it): what we knew about its docs is gone.
    store.createDb(state.name);
    state.ids.length = 0;
    state.revs.length = 0;
    state.ddocRev = undefined;
    if (state.withViews) putViews(state);
  };

  let isSetUp = false;
  const setup = (): void => {
    states.forEach(ensure);
    isSetUp = true;
  };

  /** Swap-remove the doc at `index` (its id and rev). */
  const forget = (state: DbState, index: number): void => {
    const lastId = state.ids.pop();
    const lastRev = state.revs.pop();
    if (lastId !== undefined && lastRev !== undefined && index < state.ids.length) {
      state.ids[index] = lastId;
      state.revs[index] = lastRev;
    }
  };

  const operate = (): void => {
    const state = states[Math.min(dbCount - 1, Math.floor(dbCount * random.next() ** skew))];
    if (state === undefined) return;
    ensure(state);
    counters.operations++;
    const roll = random.next();
    if (state.withViews && roll < viewChangeFraction) {
      state.viewGeneration++;
      putViews(state);
      counters.viewChanges++;
      return;
    }
    const hasDocs = state.ids.length > 0;
    const full = state.ids.length >= maxDocsPerDb;
    if (hasDocs && roll < options.deleteFraction) {
      const index = random.int(state.ids.length);
      const id = state.ids[index];
      const rev = state.revs[index];
      if (id === undefined || rev === undefined) return;
      const result = store.deleteDoc(state.name, id, rev);
      forget(state, index);
      if (result.ok) counters.deletes++;
      else counters.rejected++;
      return;
    }
    if (hasDocs && (full || roll < options.deleteFraction + options.updateFraction)) {
      // Picked inline, not by a helper closure: one per operation was measurable in bench:simulate.
      const index = random.int(state.ids.length);
      const id = state.ids[index];
      if (id === undefined) return;
      const result = store.putDoc(state.name, {
        _id: id,
        _rev: state.revs[index],
        n: state.nextDocNumber++,
        padding,
      });
      if (result.ok) {
        state.revs[index] = result.rev;
        counters.updates++;
      } else {
        forget(state, index);
        counters.rejected++;
      }
      return;
    }
    const id = `doc-${String(state.nextDocNumber).padStart(8, "0")}`;
    const result = store.putDoc(state.name, { _id: id, n: state.nextDocNumber++, padding });
    if (result.ok) {
      state.ids.push(id);
      state.revs.push(result.rev);
      counters.inserts++;
    } else counters.rejected++;
  };

  const tick = (): void => {
    owedOperations += (options.writesPerSecond * tickMs) / 1000;
    const due = Math.min(maxOperationsPerTick, Math.floor(owedOperations));
    owedOperations = Math.min(owedOperations - due, maxOperationsPerTick);
    for (let i = 0; i < due; i++) operate();
    cancelTick = scheduler.setTimeout(tick, tickMs);
  };

  /** Deleted, then created again at once (with its design doc): a `deleted` and a `created` event. */
  const recreateOne = (): void => {
    const state = states[random.int(dbCount)];
    if (state !== undefined && store.deleteDb(state.name)) {
      ensure(state);
      counters.dbsRecreated++;
    }
    scheduleRecreate();
  };

  const scheduleRecreate = (): void => {
    const everyMs = options.recreateDbEveryMs;
    cancelRecreate = everyMs === undefined || everyMs <= 0 ? undefined : scheduler.setTimeout(recreateOne, everyMs);
  };

  const stats = (): WorkloadStats => ({ ...counters });

  return {
    dbs: states.map((state) => state.name),
    setup,
    start() {
      if (cancelTick !== undefined) return;
      setup();
      cancelTick = scheduler.setTimeout(tick, tickMs);
      scheduleRecreate();
    },
    stop() {
      cancelTick?.();
      cancelTick = undefined;
      cancelRecreate?.();
      cancelRecreate = undefined;
    },
    step(n) {
      // Create every db once; afterwards `operate` re-creates the one it picks if it was deleted
      // (checking all of them per step cost 10,000 lookups a step in bench:simulate).
      if (!isSetUp) setup();
      for (let i = 0; i < n; i++) operate();
      return stats();
    },
    stats,
  };
}
