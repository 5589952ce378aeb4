/**
 * Reconciliation, the shell: walks the server's db list page by page (the
 * pure walk in core/db-updates/reconcile-pass.ts), asks the core what each
 * page's missed events are (core/db-updates/reconcile.ts), emits them through
 * the feed's own listener and writer, and records what it learnt once they
 * are written. Runs at start and whenever the event source says events may
 * have been missed (`source-resumed`) or the writer dropped some.
 *
 * Paced: at most `requestsPerSec` store calls a second (one `_all_dbs` page,
 * one `_dbs_info` per 100 dbs), through the injected scheduler, so 100,000
 * dbs take minutes of light load, not a burst. One page at a time; a failed
 * page is retried with capped back-off. Resumable: the cursor is checkpointed
 * with the knowledge (known-dbs.ts), so a stop, crash or outage mid-pass
 * continues from where it was.
 */
import {
  adoptsSilently,
  decidePage,
  freshPass,
  nextPage,
  pageCovered,
  pageDone,
  requestPass,
  seqMarkOf,
  type EventKey,
  type KnownDb,
  type PassState,
  type SeqMark,
} from "../../core/db-updates/index.js";
import { cappedExponentialMs } from "../../core/shared/backoff.js";
import { errorText } from "../../core/shared/error-text.js";
import { DEFAULT_DBS_PER_INFO_REQUEST } from "../../core/shared/dbs-info.js";
import type { CancelTimer, Logger, Scheduler } from "../../ports/shell.js";
import type { DbListing } from "../../ports/store.js";
import type { KnownDbs } from "./known-dbs.js";

export interface ReconcileSettings {
  readonly pageSize: number;
  /** Store calls per second, > 0. */
  readonly requestsPerSec: number;
  readonly maxDbs: number;
  /** The feed db: never reconciled (its own events are ignored too). */
  readonly feedDbName: string;
  readonly retryInitialDelayMs: number;
  readonly retryMaxDelayMs: number;
  /** The knowledge and cursor are saved at most this often, and at the end of each pass and at stop. */
  readonly checkpointIntervalMs: number;
}

/** Where the missed events go: the feed's listener. */
export interface ReconcileTarget {
  /** True once every one of them is written. */
  submitReconciled(keys: readonly EventKey[]): Promise<boolean>;
  /** True once every event accepted so far is written: the knowledge then reflects them. */
  whenPendingWritten(): Promise<boolean>;
}

export interface ReconcilerOptions {
  readonly listing: DbListing;
  readonly known: KnownDbs;
  readonly target: ReconcileTarget;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly settings: ReconcileSettings;
}

export interface ReconcilerStatus {
  /** A pass is under way. */
  readonly active: boolean;
  /** Dbs waiting to be looked at again on their own. */
  readonly rechecks: number;
  /** The last db covered by the pass under way (or the last one). */
  readonly cursor: string | undefined;
  /** The first pass records a baseline (no events for dbs that existed before). */
  readonly baseline: boolean;
  readonly lastError: string | undefined;
}

export interface ReconcilerMetrics {
  /** Passes completed. */
  readonly reconcile_passes: number;
  readonly reconcile_pages: number;
  /** Pages that failed (store down, events not written) and were retried. */
  readonly reconcile_failures: number;
  /** Events emitted by reconciliation (they are also counted as they are written). */
  readonly reconcile_events: number;
  readonly known_dbs: number;
  /** Times a db was left out because `reconcile_max_dbs` was reached. */
  readonly untracked_dbs: number;
}

export interface Reconciler {
  /** Loads what was saved and starts a pass (it runs in the background). */
  start(): Promise<void>;
  /** Events may have been missed: go round once more from where the walk is. */
  request(reason: string): void;
  /** Look at this db again on its own (the feed's order of its rows may be wrong). */
  recheck(db: string): void;
  /** A live event about `db` arrived: what a page read of it before may be stale. */
  noteLiveEvent(db: string): void;
  /** The knowledge changed (the feed wrote created/deleted rows): a checkpoint within the interval. */
  knowledgeChanged(): void;
  /** Stops paging (a page waiting for its writes gives up); call `saveNow` after the feed flushed. */
  halt(): Promise<void>;
  saveNow(): Promise<void>;
  status(): ReconcilerStatus;
  metrics(): ReconcilerMetrics;
}

/** Live events remembered during one page; beyond, the page is read again later instead. */
const MAX_TOUCHED = 10_000;
/** Fresh reads of the dbs live events touched during a page (after the first), before they are queued for later. */
const MAX_RECHECKS = 3;
/** Dbs waiting to be looked at again on their own; beyond, a pass goes round instead. */
const MAX_RECHECK_QUEUE = 10_000;

export function createReconciler(o: ReconcilerOptions): Reconciler {
  const { known, scheduler, logger, settings } = o;
  let pass: PassState = freshPass();
  let started = false;
  let stopped = false;
  let worker: Promise<void> | undefined;
  let cancelSleep: (() => void) | undefined;
  let onStop: () => void = () => undefined;
  let stopping = new Promise<false>((resolve) => (onStop = () => resolve(false)));
  const touched = new Set<string>();
  let touchedOverflow = false;
  let failuresInARow = 0;
  let lastError: string | undefined;
  let passDirty = false;
  let cancelCheckpoint: CancelTimer | undefined;
  let lastCheckpointMs = scheduler.nowMs();
  const counters = { reconcile_passes: 0, reconcile_pages: 0, reconcile_failures: 0, reconcile_events: 0 };
  /** Bumped by each request: a page read before a request does not count towards the round it asked for. */
  let requests = 0;
  let passEvents = 0;
  /** Db -> whether, unknown, it would be recorded silently (baseline). */
  const rechecks = new Map<string, boolean>();
  /** Rechecks and pages take turns, so neither starves the other. */
  let rechecksNext = true;

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const cancel = scheduler.setTimeout(() => {
        cancelSleep = undefined;
        resolve();
      }, ms);
      cancelSleep = () => {
        cancel();
        resolve();
      };
    });

  async function checkpointNow(): Promise<void> {
    cancelCheckpoint?.();
    cancelCheckpoint = undefined;
    lastCheckpointMs = scheduler.nowMs();
    const saving = pass;
    passDirty = false;
    if ((await known.checkpoint(saving)) === "failed") {
      passDirty = true;
      scheduleCheckpoint();
    }
  }

  function scheduleCheckpoint(): void {
    if (cancelCheckpoint !== undefined || stopped || !started) return;
    const dueInMs = Math.max(0, lastCheckpointMs + settings.checkpointIntervalMs - scheduler.nowMs());
    cancelCheckpoint = scheduler.setTimeout(() => {
      cancelCheckpoint = undefined;
      void checkpointNow();
    }, dueInMs);
  }

  /** One page: list, read seqs, decide, emit and wait until written, record, advance. Returns the store calls made. */
  async function runPage(): Promise<number> {
    const query = nextPage(pass, settings.pageSize);
    if (query === undefined) return 0;
    touched.clear();
    touchedOverflow = false;
    const requestsAtStart = requests;
    await caughtUp();
    const listed = await o.listing.listDbsAfter(query.after, query.limit);
    const covered = pageCovered(query, listed);
    const names = listed.filter((db) => db !== settings.feedDbName);
    const inRange = known.range(query.after, covered.through);
    inRange.delete(settings.feedDbName);
    const adopt = (db: string): boolean => adoptsSilently(pass, db);
    // What the page listed is read first (a known db it did not list is gone).
    const { calls, stillBusy } = await reconcileNames([...new Set([...names, ...inRange.keys()])], names, adopt);
    if (stopped) return calls + 1;
    addRechecks(stillBusy.map((db) => [db, adopt(db)]));
    // Asked again meanwhile, or too busy to track which dbs live events touched: this page is read again at the round's end.
    pass = pageDone(pass, covered, touchedOverflow || requests !== requestsAtStart);
    passDirty = true;
    counters.reconcile_pages++;
    return calls + 1;
  }

  /** Dbs looked at again on their own (a write had both their created and deleted rows; still busy after their page). */
  async function runRechecks(): Promise<number> {
    const batch = [...rechecks].slice(0, settings.pageSize);
    for (const [db] of batch) rechecks.delete(db);
    const adoptable = new Set(batch.filter(([, adopt]) => adopt).map(([db]) => db));
    const dbs = batch.map(([db]) => db);
    touched.clear();
    touchedOverflow = false;
    try {
      await caughtUp();
      const { calls, stillBusy } = await reconcileNames(dbs, dbs, (db) => adoptable.has(db));
      addRechecks(stillBusy.map((db) => [db, adoptable.has(db)]));
      return calls;
    } catch (e) {
      addRechecks(batch);
      throw e;
    }
  }

  /**
   * Decide for `todo` from reads of the store. Dbs a live event touched while
   * they were read are read again (a decision from the older read, written
   * after the live event, would contradict it), a few times; those still
   * busy are returned.
   */
  async function reconcileNames(
    todo: readonly string[],
    firstRead: readonly string[],
    adopt: (db: string) => boolean,
  ): Promise<{ calls: number; stillBusy: string[] }> {
    let calls = 0;
    let left = todo;
    let read = firstRead;
    for (let round = 0; left.length > 0 && round <= MAX_RECHECKS && !stopped; round++) {
      if (round > 0) {
        touched.clear();
        await caughtUp();
      }
      const seqs = read.length === 0 ? new Map<string, string>() : await o.listing.dbUpdateSeqs(read);
      // Counted after the call: a CouchDB listing may have learnt a smaller batch from the server meanwhile.
      calls += Math.ceil(read.length / (o.listing.dbInfosBatchSize ?? DEFAULT_DBS_PER_INFO_REQUEST));
      await settle(
        left.filter((db) => touchedOverflow || !touched.has(db)),
        seqs,
        adopt,
      );
      left = touchedOverflow ? [] : left.filter((db) => touched.has(db));
      read = left;
    }
    return { calls, stillBusy: stopped ? [] : [...left] };
  }

  /** Queue dbs (with whether an unknown one is part of the baseline) to be looked at again. */
  function addRechecks(dbs: readonly (readonly [string, boolean])[]): void {
    for (const [db, adopt] of dbs) {
      if (rechecks.size >= MAX_RECHECK_QUEUE && !rechecks.has(db)) {
        // Too many to track one by one: a pass goes round instead.
        logger.debug({ limit: MAX_RECHECK_QUEUE }, "db updates: too many dbs to re-check; reconciling everything");
        request("too many dbs to re-check");
        return;
      }
      rechecks.set(db, adopt);
    }
    if (dbs.length > 0) wake();
  }

  /**
   * Wait until the feed wrote every event accepted so far, so the knowledge
   * reflects them before the store is read: a decision against knowledge that
   * a pending write is about to change would be undone by that write. Events
   * accepted from here on are live events (`touched`).
   */
  async function caughtUp(): Promise<void> {
    const written = await Promise.race([o.target.whenPendingWritten(), stopping]);
    if (!written && !stopped) throw new Error("the feed did not write the events it had accepted (dropped or stopped); retrying");
  }

  /** Decide for `dbs` against these seqs (a db without one is not on the server), emit, wait until written, record. */
  async function settle(dbs: readonly string[], seqs: ReadonlyMap<string, string>, adopt: (db: string) => boolean): Promise<void> {
    if (dbs.length === 0) return;
    const server = new Map<string, SeqMark>();
    const inKnowledge = new Map<string, KnownDb>();
    for (const db of dbs) {
      const seq = seqs.get(db);
      if (seq !== undefined) server.set(db, seqMarkOf(seq));
      const entry = known.get(db);
      if (entry !== undefined) inKnowledge.set(db, entry);
    }
    const decision = decidePage({ known: inKnowledge, server, adopt, room: settings.maxDbs - known.size });
    known.noteUntracked(decision.untracked.length);
    if (decision.events.length > 0) {
      const written = await Promise.race([o.target.submitReconciled(decision.events), stopping]);
      if (stopped) return;
      if (!written) throw new Error("the feed did not write this page's events (dropped or stopped); retrying the page");
    }
    for (const [db, mark] of decision.record) if (!touchedOverflow && !touched.has(db)) known.record(db, mark, adopt(db));
    counters.reconcile_events += decision.events.length;
    passEvents += decision.events.length;
  }

  const busy = (): boolean => pass.active || rechecks.size > 0;

  function request(reason: string): void {
    if (!started || stopped) return;
    // Once per pass at info: a source dropping events again and again must not flood the log.
    (pass.active ? logger.debug : logger.info).call(logger, { reason, from: pass.cursor }, "db updates: events may have been missed; reconciling");
    requests++;
    pass = requestPass(pass);
    wake();
  }

  async function run(): Promise<void> {
    while (busy() && !stopped) {
      const wasActive = pass.active;
      let waitMs: number;
      try {
        const doRechecks = rechecks.size > 0 && (rechecksNext || !pass.active);
        rechecksNext = !doRechecks;
        const calls = doRechecks ? await runRechecks() : await runPage();
        if (failuresInARow > 0) logger.info({ failures: failuresInARow }, "db updates: reconciliation resumed");
        failuresInARow = 0;
        lastError = undefined;
        waitMs = (calls * 1000) / settings.requestsPerSec;
      } catch (e) {
        counters.reconcile_failures++;
        failuresInARow++;
        lastError = errorText(e);
        const log = failuresInARow === 1 ? logger.warn.bind(logger) : logger.debug.bind(logger);
        log({ error: lastError, cursor: pass.cursor }, "db updates: a reconcile page failed; retrying");
        waitMs = Math.max(1000 / settings.requestsPerSec, cappedExponentialMs(settings.retryInitialDelayMs, settings.retryMaxDelayMs, failuresInARow - 1));
      }
      if (stopped) break;
      if (wasActive && !pass.active) {
        counters.reconcile_passes++;
        logger.info({ events: passEvents, knownDbs: known.size }, "db updates: reconciled with the server's db list");
        passEvents = 0;
        await checkpointNow();
      } else if (scheduler.nowMs() - lastCheckpointMs >= settings.checkpointIntervalMs) {
        await checkpointNow();
      }
      if (busy()) await sleep(waitMs);
    }
  }

  function wake(): void {
    if (!started || stopped || worker !== undefined) return;
    worker = run().finally(() => {
      worker = undefined;
      if (busy()) wake();
    });
  }

  return {
    async start() {
      const saved = await known.load();
      pass = requestPass(saved ?? freshPass());
      logger.info({ resumeAfter: pass.cursor, baseline: pass.baselineThrough !== undefined }, "db updates: reconciling with the server's db list");
      started = true;
      stopped = false;
      stopping = new Promise<false>((resolve) => (onStop = () => resolve(false)));
      wake();
    },
    request,
    recheck: (db) => addRechecks([[db, false]]),
    noteLiveEvent(db) {
      if (!busy() || touchedOverflow) return;
      touched.add(db);
      if (touched.size > MAX_TOUCHED) {
        touchedOverflow = true;
        touched.clear();
      }
    },
    knowledgeChanged: scheduleCheckpoint,
    async halt() {
      stopped = true;
      onStop();
      cancelSleep?.();
      cancelCheckpoint?.();
      cancelCheckpoint = undefined;
      await worker;
    },
    async saveNow() {
      if (!started) return;
      if (passDirty || known.isDirty()) await checkpointNow();
    },
    status: () => ({ active: pass.active, rechecks: rechecks.size, cursor: pass.cursor, baseline: pass.baselineThrough !== undefined, lastError }),
    metrics: () => ({ ...counters, known_dbs: known.size, untracked_dbs: known.untracked }),
  };
}
