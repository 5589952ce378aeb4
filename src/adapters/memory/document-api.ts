/**
 * The document API of upholster's HTTP server (`DocumentApi`, declared in
 * src/http/documents/document-api.ts; this file matches it structurally, as
 * adapters sit below http) for the memory store, built on the store's own
 * methods: dbs, docs (tombstones included), bulk writes, the live docs for
 * `_all_docs`, changes, and longpoll waits.
 *
 * Waits follow the store's event source, subscribed while anyone waits:
 * a `db-updated` for the db (or a `source-resumed`) wakes its waiters, a
 * `db-deleted` ends them with `gone`. At most `maxWaiters` wait at once;
 * more are refused with 503 rather than held without bound.
 *
 * While the store is switched off (`setAvailable(false)`), calls reject
 * with a 503 refusal (CouchDB's `service_unavailable` body).
 */
import type { EventSource, StoreEvent } from "../../ports/events.js";
import type { CancelTimer, Timers } from "../../ports/shell.js";
import type { DocumentApi, DocumentDb, DocumentDbInfo, WaitOptions, WaitOutcome } from "../../ports/document-api.js";
import type { DbInfo, DbName } from "../../ports/store.js";
import { NotFoundError, StoreUnavailableError, type MemoryStore } from "./store.js";

export interface MemoryDocumentApiOptions {
  readonly store: MemoryStore;
  /** For longpoll timeouts: the store's scheduler. */
  readonly timers: Timers;
  /** Longpoll clients waiting at once. Default 10,000. */
  readonly maxWaiters?: number | undefined;
}

/** A refusal with CouchDB's body: what the HTTP routes answer as is. */
export class DocumentApiRefusal extends Error {
  readonly status = 503;
  readonly error = "service_unavailable";
  constructor(readonly reason: string) {
    super(reason);
    this.name = "DocumentApiRefusal";
  }
}

export const DEFAULT_MAX_WAITERS = 10_000;

export function createMemoryDocumentApi(options: MemoryDocumentApiOptions): DocumentApi {
  const { store } = options;
  const waiters = new ChangeWaiters(store.createEventSource(), options.timers, options.maxWaiters ?? DEFAULT_MAX_WAITERS);
  return {
    listDbs: () => refusing(() => store.listDbs()),
    createDb: (db) => whenAvailable(store, () => store.createDb(db)),
    deleteDb: (db) => whenAvailable(store, () => store.deleteDb(db)),
    openDb: (db) => whenAvailable(store, () => (store.dbExists(db) ? openDb(store, db, waiters) : undefined)),
  };
}

function openDb(store: MemoryStore, db: DbName, waiters: ChangeWaiters): DocumentDb {
  return {
    info: () => refusing(async () => infoBody(await store.dbInfo(db), store.model.currentDiskFormatVersion)),
    getDoc: (id) => refusing(() => store.getDocOrTombstone(db, id)),
    // The store's synchronous write reports a vanished db per doc (`not_found`), as the routes want.
    writeDocs: (docs) => whenAvailable(store, () => store.writeDocs(db, docs)),
    liveDocs: () => refusing(async () => (await changesOf(store, db, "0")).rows.filter((row) => row.deleted !== true).map(({ id, rev }) => ({ id, rev }))),
    changes: (since) => refusing(() => changesOf(store, db, since)),
    waitForChange: (since, wait) => refusing(() => waiters.wait(db, () => changedSince(store, db, since), wait)),
  };
}

/** `sizes.external` is not modelled: the live bytes stand in for it. No purges, no shard files: `purge_seq` and `instance_start_time` are "0". */
function infoBody(info: DbInfo | undefined, currentDiskFormatVersion: number): DocumentDbInfo | undefined {
  if (info === undefined) return undefined;
  return {
    db: info.db,
    updateSeq: info.updateSeq,
    purgeSeq: "0",
    fileBytes: info.fileBytes,
    activeBytes: info.activeBytes,
    externalBytes: info.activeBytes,
    docCount: info.docCount,
    docDelCount: info.docDelCount,
    compactionRunning: info.compactionRunning,
    diskFormatVersion: info.diskFormatVersion ?? currentDiskFormatVersion,
    instanceStartTime: "0",
  };
}

/** Every change after `since` (`now` resolved first); a db deleted meanwhile has none. */
async function changesOf(store: MemoryStore, db: DbName, since: string) {
  try {
    const resolved = since === "now" ? await store.currentSeq(db) : since;
    const page = await store.changes(db, { since: resolved });
    return { rows: page.results, since: resolved, lastSeq: page.lastSeq };
  } catch (error) {
    if (error instanceof NotFoundError) return { rows: [], since, lastSeq: since };
    throw error;
  }
}

/**
 * How a wait ends before it starts: `changed` when the db is already past
 * `since`, `gone` when it no longer exists, `undefined` to wait (also while
 * the store is switched off: its events are held and come when it returns).
 */
async function changedSince(store: MemoryStore, db: DbName, since: string): Promise<"changed" | "gone" | undefined> {
  if (!store.isAvailable()) return undefined;
  const current = (await store.dbUpdateSeqs([db])).get(db);
  if (current === undefined) return "gone";
  const sinceNumber = since === "now" ? Number(current) : Number(/^\d+/.exec(since)?.[0] ?? "0");
  return Number(current) > sinceNumber ? "changed" : undefined;
}

/** The store's synchronous API does not check availability: this does, as its port methods do. */
function whenAvailable<T>(store: MemoryStore, call: () => T): Promise<T> {
  return refusing(async () => {
    if (!store.isAvailable()) throw new StoreUnavailableError("document API");
    return call();
  });
}

/** The store switched off is a 503 refusal; anything else stays what it is. */
async function refusing<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw new DocumentApiRefusal("The embedded store is unavailable; try again later.");
    throw error;
  }
}

type Wake = (outcome: "changed" | "gone") => void;

/**
 * Longpoll waiters per db, woken by the store's events. The event source is
 * started with the first waiter and stopped with the last (the memory
 * store's sources subscribe synchronously, so a write between a check and
 * the subscription cannot be missed: waiters subscribe first, then check).
 */
class ChangeWaiters {
  private readonly byDb = new Map<DbName, Set<Wake>>();
  private count = 0;
  private subscribed = false;

  constructor(
    private readonly source: EventSource,
    private readonly timers: Timers,
    private readonly maxWaiters: number,
  ) {}

  /** `already`: how the wait ends at once, if it does (checked after subscribing: no write slips between). */
  async wait(db: DbName, already: () => Promise<"changed" | "gone" | undefined>, options: WaitOptions): Promise<WaitOutcome> {
    const { timeoutMs, signal } = options;
    if (signal.aborted) return "aborted";
    if (this.count >= this.maxWaiters) {
      throw new DocumentApiRefusal(`${this.maxWaiters} clients are already waiting for changes; try again later.`);
    }
    let settle: (outcome: WaitOutcome) => void = () => undefined;
    const outcome = new Promise<WaitOutcome>((resolve) => (settle = resolve));
    const release = this.enter(db, settle, timeoutMs, signal);
    try {
      options.onWaiting?.();
      const early = await already();
      if (early !== undefined) settle(early);
      return await outcome;
    } finally {
      release();
    }
  }

  /** Registers one waiter; returns what undoes it (timer, abort listener, subscription). */
  private enter(db: DbName, settle: (outcome: WaitOutcome) => void, timeoutMs: number, signal: AbortSignal): () => void {
    const wake: Wake = (outcome) => settle(outcome);
    const onAbort = () => settle("aborted");
    const cancelTimer: CancelTimer = this.timers.setTimeout(() => settle("timeout"), timeoutMs);
    signal.addEventListener("abort", onAbort);
    const set = this.byDb.get(db) ?? new Set<Wake>();
    set.add(wake);
    this.byDb.set(db, set);
    this.count++;
    this.subscribe();
    return () => {
      cancelTimer();
      signal.removeEventListener("abort", onAbort);
      set.delete(wake);
      if (set.size === 0 && this.byDb.get(db) === set) this.byDb.delete(db);
      this.count--;
      this.unsubscribeWhenIdle();
    };
  }

  private readonly onEvent = (event: StoreEvent): void => {
    if (event.type === "source-resumed") {
      for (const set of this.byDb.values()) for (const wake of set) wake("changed");
      return;
    }
    const outcome = event.type === "db-deleted" ? "gone" : "changed";
    for (const wake of this.byDb.get(event.db) ?? []) wake(outcome);
  };

  private subscribe(): void {
    if (this.subscribed) return;
    this.subscribed = true;
    void this.source.start(this.onEvent);
  }

  private unsubscribeWhenIdle(): void {
    if (this.count > 0 || !this.subscribed) return;
    this.subscribed = false;
    void this.source.stop();
  }
}
