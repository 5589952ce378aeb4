/**
 * The db updates service: runs the pure listener and writer over a scheduler,
 * persists event keys in the feed db through the DocumentStore (so the feed's
 * seq is that db's seq and it survives restarts), and tells feed readers when
 * new rows were written.
 *
 * Guarantees (see docs/db-updates.md): an event accepted here is written
 * at least once unless the process dies before the write succeeds or the
 * bound `maxPendingKeys` is hit while the store is down; a store outage only
 * delays it (retries with capped back-off). Like CouchDB, events are
 * coalesced per (type, db): the feed keeps the latest seq of each key.
 */
import type { StoreEvent } from "../../ports/events.js";
import type { Logger, Scheduler, CancelTimer } from "../../ports/shell.js";
import type { DocumentStore } from "../../ports/store.js";
import {
  initialListenerState,
  initialWriterState,
  listenerPendingCount,
  listenerStep,
  writerPendingCount,
  writerStep,
  batchKeys,
  encodeKey,
  type DbEventType,
  type DbUpdatesConfig,
  type EventKey,
  type ListenerInput,
  type ListenerSettings,
  type ListenerState,
  type WriterInput,
  type WriterSettings,
  type WriterState,
} from "../../core/db-updates/index.js";
import type { DbUpdatesFeed, WaitResult } from "../../http/db-updates/feed.js";
import { errorText } from "../../core/shared/error-text.js";
import { RevCache } from "./rev-cache.js";
import { writeKeys } from "./write-keys.js";
import { WriteBarriers } from "./write-barrier.js";
import { cappedExponentialMs } from "../../core/shared/backoff.js";

export interface DbUpdatesMetrics {
  /** Docs written to the feed db (CouchDB's `db_writes`). */
  readonly db_writes: number;
  /** Conflicts while updating event docs in place (CouchDB's `event_doc_conflict`). */
  readonly event_doc_conflict: number;
  /** Keys waiting in the listener batch (CouchDB's `listener_pending_updates`). */
  readonly listener_pending_updates: number;
  /** Keys waiting in the writer, in flight included (CouchDB's `server_pending_updates`). */
  readonly server_pending_updates: number;
  /** Keys being written right now. */
  readonly in_flight: number;
  /** Failed write attempts since start (each is retried). */
  readonly write_failures: number;
  /** Consecutive failed writes now (0 when the store is healthy). */
  readonly consecutive_write_failures: number;
  /** Keys refused because `max_pending_keys` was reached (lost events: should stay 0). */
  readonly dropped_events: number;
  /** Store events accepted (created/updated/deleted, the feed db's own excluded). */
  readonly events_received: number;
  /** Feed readers waiting for a change. */
  readonly subscribers: number;
}

export type { FeedPage, ReadChangesQuery, WaitResult } from "../../http/db-updates/feed.js";

export interface DbUpdatesService extends DbUpdatesFeed {
  /** Feed the service every store event; others than db-created/updated/deleted are ignored. */
  handleStoreEvent(event: StoreEvent): void;
  /** Events found missing by reconciliation: through the listener like any other; true once all are written. */
  submitReconciled(keys: readonly EventKey[]): Promise<boolean>;
  /** True once every event accepted so far is written (false if some were dropped, or on stop). */
  whenPendingWritten(): Promise<boolean>;
  /** Ensures the feed db (retrying in the background if the store is down). */
  start(): Promise<void>;
  /** Flushes what is pending (one attempt, bounded by `flushTimeoutMs`), then stops timers. */
  stop(options?: { readonly flushTimeoutMs?: number }): Promise<void>;
  /** Applies a new config (e.g. `update_db = false` clears pending state). */
  configure(config: DbUpdatesConfig): void;
  metrics(): DbUpdatesMetrics;
  readonly feedDbName: string;
}

export interface DbUpdatesServiceOptions {
  readonly store: DocumentStore;
  readonly scheduler: Scheduler;
  readonly config: DbUpdatesConfig;
  readonly logger: Logger;
  /** Bound on feed readers waiting at once. Default 10,000. */
  readonly maxSubscribers?: number;
  /** Told around each write (the reconciler's knowledge follows what the feed wrote). */
  readonly journal?: WriteJournal | undefined;
  /** The writer dropped keys (its bound): events are lost until reconciliation restates them. */
  readonly onDropped?: (() => void) | undefined;
}

/** Hooks around the feed's writes. */
export interface WriteJournal {
  /** Before the keys are written; the write waits for it (it may save something first). Must not reject. */
  beforeWrite(keys: readonly string[]): Promise<void>;
  /** These keys were written. */
  written(keys: readonly string[]): void;
}

const STORE_EVENT_TYPES: Readonly<Record<string, DbEventType>> = {
  "db-created": "created",
  "db-updated": "updated",
  "db-deleted": "deleted",
};

const listenerSettings = (c: DbUpdatesConfig): ListenerSettings => ({
  updateDb: c.updateDb,
  maxEventDelayMs: c.maxEventDelayMs,
  maxPendingKeys: c.maxPendingKeys,
  feedDbName: c.dbName,
});

const writerSettings = (c: DbUpdatesConfig): WriterSettings => ({
  updateDb: c.updateDb,
  maxWriteDelayMs: c.maxWriteDelayMs,
  maxPendingKeys: c.maxPendingKeys,
  maxWriteBatch: c.maxWriteBatch,
  retryInitialDelayMs: c.retryInitialDelayMs,
  retryMaxDelayMs: c.retryMaxDelayMs,
});


export function createDbUpdatesService(options: DbUpdatesServiceOptions): DbUpdatesService {
  const { store, scheduler, logger } = options;
  let config = options.config;
  const feedDbName = config.dbName;
  const maxSubscribers = options.maxSubscribers ?? 10_000;
  let listener: ListenerState = initialListenerState(listenerSettings(config));
  let writer: WriterState = initialWriterState(writerSettings(config));
  const revs = new RevCache(Math.min(config.maxPendingKeys, 100_000));
  const subscribers = new Set<() => void>();
  let cancelListenerTimer: CancelTimer | undefined;
  let cancelWriterTimer: CancelTimer | undefined;
  let cancelEnsureTimer: CancelTimer | undefined;
  let dbReady = false;
  let stopped = false;
  let inFlightWrite: Promise<void> | undefined;
  const counters = { db_writes: 0, event_doc_conflict: 0, write_failures: 0, dropped_events: 0, events_received: 0 };
  const barriers = new WriteBarriers();
  let droppedWarned = false;

  function runListener(input: ListenerInput): void {
    const out = listenerStep(listener, input, scheduler.nowMs());
    listener = out.state;
    cancelListenerTimer?.();
    cancelListenerTimer = undefined;
    if (out.wakeAtMs !== undefined && !stopped) {
      cancelListenerTimer = scheduler.setTimeout(() => runListener({ type: "tick" }), out.wakeAtMs - scheduler.nowMs());
    }
    if (out.released.length > 0) runWriter({ type: "keys", keys: out.released });
  }

  function runWriter(input: WriterInput): void {
    const out = writerStep(writer, input, scheduler.nowMs());
    writer = out.state;
    if (out.dropped.length > 0) {
      counters.dropped_events += out.dropped.length;
      barriers.dropped(out.dropped);
      options.onDropped?.();
      if (!droppedWarned) {
        droppedWarned = true;
        logger.error({ dropped: out.dropped.length, maxPendingKeys: config.maxPendingKeys }, "db updates: pending key bound reached, dropping new events");
      }
    }
    cancelWriterTimer?.();
    cancelWriterTimer = undefined;
    if (out.wakeAtMs !== undefined && !stopped) {
      cancelWriterTimer = scheduler.setTimeout(() => runWriter({ type: "tick" }), out.wakeAtMs - scheduler.nowMs());
    }
    if (out.write !== undefined) inFlightWrite = performWrite(out.write);
  }

  async function performWrite(keys: readonly string[]): Promise<void> {
    const writeId = barriers.writeStarted();
    let failed: readonly string[] = keys;
    try {
      await options.journal?.beforeWrite(keys);
      if (!dbReady) {
        await store.ensureDb(feedDbName);
        dbReady = true;
      }
      const outcome = await writeKeys(store, feedDbName, keys, revs);
      counters.db_writes += outcome.written;
      counters.event_doc_conflict += outcome.conflicts;
      failed = outcome.failed;
      if (failed.length > 0) {
        logger.warn({ failed: failed.length, error: outcome.error }, "db updates: some event docs not written, will retry");
      }
    } catch (e) {
      dbReady = false;
      logger.warn({ keys: keys.length, error: errorText(e), failures: writer.failures + 1 }, "db updates: write failed, will retry");
    }
    if (failed.length > 0) counters.write_failures++;
    else if (droppedWarned && writerPendingCount(writer) === 0) droppedWarned = false;
    const notWritten = new Set(failed);
    const stored = keys.filter((k) => !notWritten.has(k));
    if (stored.length > 0) {
      options.journal?.written(stored);
      barriers.written(writeId, stored);
    }
    inFlightWrite = undefined;
    runWriter({ type: "write-finished", failed });
    if (failed.length < keys.length) notify();
  }

  function notify(): void {
    for (const s of [...subscribers]) {
      try {
        s();
      } catch (e) {
        logger.error({ error: errorText(e) }, "db updates: subscriber threw");
      }
    }
  }

  async function ensureFeedDb(attempt: number): Promise<void> {
    try {
      await store.ensureDb(feedDbName);
      dbReady = true;
    } catch (e) {
      const delayMs = cappedExponentialMs(config.retryInitialDelayMs, config.retryMaxDelayMs, attempt);
      logger.warn({ db: feedDbName, error: errorText(e), retryInMs: delayMs }, "db updates: cannot create the feed db yet");
      if (!stopped) cancelEnsureTimer = scheduler.setTimeout(() => void ensureFeedDb(attempt + 1), delayMs);
    }
  }

  const service: DbUpdatesService = {
    feedDbName,
    handleStoreEvent(event) {
      if (stopped) return;
      const type = STORE_EVENT_TYPES[event.type];
      if (type === undefined || event.db === undefined || event.db === feedDbName) return;
      if (!config.updateDb) return;
      counters.events_received++;
      runListener({ type: "db-event", key: { type, db: event.db } });
    },
    whenPendingWritten() {
      if (stopped) return Promise.resolve(false);
      const pending = new Set([...batchKeys(listener.batch), ...batchKeys(writer.pending), ...(writer.inFlight ?? [])]);
      return barriers.wait([...pending], writer.inFlight !== undefined);
    },
    submitReconciled(keys) {
      if (stopped || !config.updateDb) return Promise.resolve(false);
      const wanted = keys.filter((k) => k.db !== feedDbName);
      const written = barriers.wait(wanted.map(encodeKey));
      for (const key of wanted) runListener({ type: "db-event", key });
      return written;
    },
    async start() {
      stopped = false;
      await ensureFeedDb(0);
    },
    async stop(stopOptions = {}) {
      const flushTimeoutMs = stopOptions.flushTimeoutMs ?? 5_000;
      cancelEnsureTimer?.();
      runListener({ type: "flush" });
      if (inFlightWrite === undefined) runWriter({ type: "flush" });
      else {
        await inFlightWrite;
        runWriter({ type: "flush" });
      }
      stopped = true;
      cancelListenerTimer?.();
      cancelWriterTimer?.();
      const pending = inFlightWrite;
      if (pending !== undefined) {
        let cancel: CancelTimer | undefined;
        await Promise.race([pending, new Promise<void>((resolve) => (cancel = scheduler.setTimeout(resolve, flushTimeoutMs)))]);
        cancel?.();
      }
      cancelWriterTimer?.();
      barriers.cancelAll();
      const left = writerPendingCount(writer) + listenerPendingCount(listener);
      if (left > 0) logger.warn({ pending: left }, "db updates: stopped with events not yet persisted");
      notify();
      subscribers.clear();
    },
    configure(next) {
      config = next;
      // update_db off drops pending keys: nothing waiting for them will be written.
      if (!next.updateDb) barriers.cancelAll();
      runListener({ type: "configure", settings: listenerSettings(next) });
      runWriter({ type: "configure", settings: writerSettings(next) });
    },
    metrics() {
      const inFlight = writer.inFlight?.length ?? 0;
      return {
        ...counters,
        listener_pending_updates: listenerPendingCount(listener),
        server_pending_updates: writerPendingCount(writer) + inFlight,
        in_flight: inFlight,
        consecutive_write_failures: writer.failures,
        subscribers: subscribers.size,
      };
    },
    async readChanges(query) {
      const page = await store.changes(feedDbName, query);
      return { results: page.results.filter((r) => r.deleted !== true), lastSeq: page.lastSeq };
    },
    currentSeq: () => store.currentSeq(feedDbName),
    subscribe(fn) {
      if (subscribers.size >= maxSubscribers) return undefined;
      subscribers.add(fn);
      return () => subscribers.delete(fn);
    },
    waitForChange(since, timeoutMs, signal) {
      return new Promise<WaitResult>((resolve) => {
        if (stopped) return resolve("stopped");
        if (signal?.aborted === true) return resolve("aborted");
        let settled = false;
        let cancelPoll: CancelTimer | undefined;
        const finish = (result: WaitResult) => {
          if (settled) return;
          settled = true;
          cancelTimeout();
          cancelPoll?.();
          unsubscribe?.();
          signal?.removeEventListener("abort", onAbort);
          resolve(result);
        };
        const onAbort = () => finish("aborted");
        signal?.addEventListener("abort", onAbort);
        const check = async () => {
          try {
            const page = await store.changes(feedDbName, { since, limit: 1 });
            if (page.results.length > 0) finish("changed");
          } catch {
            // Store unavailable: keep waiting; the next poll or notification retries.
          }
        };
        const poll = () => {
          cancelPoll = scheduler.setTimeout(() => {
            void check().then(() => {
              if (!settled) poll();
            });
          }, config.pollIntervalMs);
        };
        const unsubscribe = service.subscribe(() => (stopped ? finish("stopped") : finish("changed")));
        const cancelTimeout = scheduler.setTimeout(() => finish("timeout"), timeoutMs);
        poll();
        // Rows may have landed between the caller's read and this subscription.
        void check();
      });
    },
  };
  return service;
}
