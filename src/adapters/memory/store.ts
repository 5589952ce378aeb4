/**
 * The embedded store: the ports (`CompactionStore & DocumentStore`,
 * `EventSource`) over in-memory databases whose files are modelled byte by
 * byte (`storage-model.ts`) and whose compactions take time on the injected
 * scheduler. It is the default store of `upholster run` and the store of
 * every simulation and benchmark, so it behaves like CouchDB where smoosh can
 * tell: sizes, seqs, MVCC, 202-style idempotent compaction starts.
 *
 * Beyond the ports, a synchronous write API (`createDb`, `putDoc`, ...) for
 * workloads, demos and tests, plus fault switches (`setAvailable`,
 * `failNextJobs`).
 *
 * Views are real (`views/`): map functions run in the injected sandbox
 * (`SandboxFactory`; by default the store makes its own, released by
 * `close()`), rows are kept in CouchDB's collation, queries answer as
 * CouchDB's do (`ViewStore`).
 */
import type { EventSource, EventSourceStatus, StoreEvent, StoreEventListener } from "../../ports/events.js";
import type { Logger, Scheduler } from "../../ports/shell.js";
import { AutoIndexTimers } from "./auto-index-timers.js";
import type { SandboxFactory, SandboxLimits } from "../../ports/sandbox.js";
import type { ViewGroupInfo, ViewQuery, ViewResult, ViewStore } from "../../ports/views.js";
import type {
  ChangesPage,
  ChangesQuery,
  CompactionObject,
  DbInfo,
  DbName,
  DesignDoc,
  DesignDocId,
  DocWrite,
  DocWriteResult,
  JobHandle,
  Store,
  StoredDoc,
  ViewIndexInfo,
} from "../../ports/store.js";
import { ByteLedger, type ByteTotals } from "./byte-ledger.js";
import { bodyOf, idOf, MemoryDatabase, toStoredDoc } from "./database.js";
import { EventHub, type EventSourceOptions } from "./events.js";
import { CompactionJob, finishedHandle, type JobStatus, type JobTarget } from "./jobs.js";
import { DESIGN_PREFIX, dbNameProblem, isDesignDocId } from "./names.js";
import { compactionDurationMs, dbCompactionCost, defaultStorageModel, viewCompactionCost, type StorageModel } from "./storage-model.js";
import { DbViews } from "./views/db-views.js";
import { MemoryViews } from "./views/memory-views.js";
import { SandboxCache } from "./views/sandbox-cache.js";
import { createSandboxFactory } from "../sandbox/index.js";
import { silentLogger } from "../logging/index.js";
import { indexAfter, sortDbNames } from "../../core/db-updates/db-order.js";
import { UnannouncedEnds } from "./unannounced-ends.js";

export interface MemoryStoreOptions {
  readonly scheduler: Scheduler;
  /** Overrides of the byte/time model (see `storage-model.ts` for the calibrated defaults). */
  readonly model?: Partial<StorageModel> | undefined;
  /**
   * Build view indexes this long after a db is written, on the scheduler.
   * Default `false`: indexes are built by queries (`update=true`),
   * `updateViewGroup`/`buildViews`, and the background indexer, which calls
   * them (the scheduler cannot tell how long a real build takes).
   */
  readonly autoIndexDelayMs?: number | false | undefined;
  /** Runs map functions. Default: the store's own (`createSandboxFactory()`, a worker thread), released by `close()`. */
  readonly sandbox?: SandboxFactory | undefined;
  /** Time and memory limits of map functions (default: CouchDB's, see src/adapters/sandbox/limits.ts). */
  readonly sandboxLimits?: Partial<SandboxLimits> | undefined;
  /** Compiled design docs kept for reuse (idle ones beyond this are disposed). Default 16. */
  readonly maxSandboxes?: number | undefined;
  /** Map functions that fail, and their `log()` lines, are reported here. Default: silent. */
  readonly logger?: Logger | undefined;
  /** Events held while the store is unavailable (bounded, de-duplicated). Default 10,000. */
  readonly maxBufferedEvents?: number | undefined;
  /** Listener exceptions are reported here, never thrown into the writer. */
  readonly onListenerError?: ((error: unknown, event: StoreEvent) => void) | undefined;
  /**
   * Model CouchDB's unannounced db compaction ends (unannounced-ends.ts): a
   * db compaction's handle settles at the first info read of its db after
   * the swap (or the watcher's own read 1.5 waits on), and the daemon
   * looks at running db compactions every this many ms while they are
   * young (longer waits as they run on: look-delay.ts), as it does on
   * CouchDB with `[couchdb] job_poll_interval_ms`. For simulations that price
   * a tuning as CouchDB will. Default: ends reported at once.
   */
  readonly jobLookIntervalMs?: number | undefined;
}

export type CreateDbResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: "file_exists" | "illegal_database_name"; readonly reason: string };

/** Why a port call was refused while the store is switched off (`setAvailable(false)`). */
export class StoreUnavailableError extends Error {
  constructor(operation: string) {
    super(`unavailable: the memory store is switched off (${operation})`);
    this.name = "StoreUnavailableError";
  }
}

/** A request about something that does not exist (CouchDB's 404 `not_found`). */
export class NotFoundError extends Error {
  constructor(what: string) {
    super(`not_found: ${what}`);
    this.name = "NotFoundError";
  }
}

interface InjectedFault {
  readonly kind: CompactionObject["kind"] | undefined;
  remaining: number;
  readonly reason: string;
}

interface StoredDb {
  readonly data: MemoryDatabase;
  readonly views: DbViews;
  /** Its `db-updated` event, made once: events are read-only data, and one per write outlived the young generation (the hub logs them). */
  readonly updated: StoreEvent;
}

/** What `totals()` reports: bytes of db files and view index files, live and on "disk". */
export type StoreTotals = ByteTotals;

export function createMemoryStore(options: MemoryStoreOptions): MemoryStore {
  return new MemoryStore(options);
}

export class MemoryStore implements Store, EventSource, ViewStore {
  readonly model: StorageModel;
  private readonly scheduler: Scheduler;
  private readonly dbs = new Map<DbName, StoredDb>();
  private readonly jobs = new Map<string, CompactionJob>();
  private readonly faults = new Map<DbName, InjectedFault[]>();
  /** Undefined when auto-indexing is off. */
  private readonly autoIndex: AutoIndexTimers | undefined;
  private readonly hub: EventHub;
  private readonly defaultSource: EventSource;
  private readonly sandboxes: SandboxCache;
  private readonly views: MemoryViews;
  private readonly logger: Logger;
  private available = true;
  /** Dbs deleted so far: while it holds still, a db seen to exist still does (see `deletedDbCount`). */
  private dbsDeleted = 0;
  /** Bytes of every file in the store, kept running by the files themselves. */
  private readonly ledger = new ByteLedger();
  /** With `jobLookIntervalMs`: db compaction ends seen only by info reads, as on CouchDB. */
  private readonly unannounced: UnannouncedEnds | undefined;
  /** How often the daemon reads a running db compaction (`CompactionStore.jobLookIntervalMs`); undefined: ends are reported at once. */
  readonly jobLookIntervalMs: number | undefined;

  constructor(options: MemoryStoreOptions) {
    this.scheduler = options.scheduler;
    this.model = { ...defaultStorageModel, ...(options.model ?? {}) };
    this.logger = options.logger ?? silentLogger;
    const lookMs = options.jobLookIntervalMs;
    if (lookMs !== undefined && !(Number.isFinite(lookMs) && lookMs > 0)) {
      throw new RangeError(`createMemoryStore: jobLookIntervalMs must be a positive number of ms, got ${String(lookMs)}`);
    }
    this.jobLookIntervalMs = lookMs;
    this.unannounced = lookMs === undefined ? undefined : new UnannouncedEnds(this.scheduler, lookMs, () => this.available);
    const autoIndexDelayMs = options.autoIndexDelayMs ?? false;
    this.autoIndex =
      autoIndexDelayMs === false
        ? undefined
        : new AutoIndexTimers(this.scheduler, autoIndexDelayMs, (db) => {
            this.buildViews(db).catch((error: unknown) => this.logger.warn({ db, error: String(error) }, "auto-indexing failed"));
          });
    let ownFactory: SandboxFactory | undefined;
    // Created on first use: a store whose views are never built starts no sandbox thread.
    const factory = (): SandboxFactory => options.sandbox ?? (ownFactory ??= createSandboxFactory());
    this.sandboxes = new SandboxCache(factory, options.sandboxLimits, options.maxSandboxes ?? 16);
    this.views = new MemoryViews(
      {
        database: (db) => this.dbs.get(db),
        emit: (event) => this.hub.emit(event),
        compactionRunning: (db, signature) => this.jobs.has(viewJobKey(db, signature)),
        logger: this.logger,
      },
      this.sandboxes,
    );
    this.hub = new EventHub({
      maxBufferedEvents: options.maxBufferedEvents,
      onListenerError: options.onListenerError,
      resync: () => [...this.dbs.keys()].map((db) => ({ type: "db-updated", db })),
    });
    this.defaultSource = this.hub.createEventSource();
  }

  // --- EventSource -----------------------------------------------------------

  /** The store's own subscription; use `createEventSource()` for each further consumer. */
  start(listener: StoreEventListener): Promise<void> {
    return this.defaultSource.start(listener);
  }

  stop(): Promise<void> {
    return this.defaultSource.stop();
  }

  status(): EventSourceStatus {
    return this.defaultSource.status();
  }

  /** An independent event subscription (smoosh, the db updates feed, ... each take one). */
  createEventSource(options: EventSourceOptions = {}): EventSource {
    return this.hub.createEventSource(options);
  }

  // --- fault switches --------------------------------------------------------

  /** `false`: every port method rejects with `StoreUnavailableError` until switched back. Data is kept. */
  setAvailable(available: boolean): void {
    this.available = available;
    this.hub.setAvailable(available);
  }

  isAvailable(): boolean {
    return this.available;
  }

  /** The next `count` jobs on `db` (of `kind`, or any) fail with `reason` when they would have finished. */
  failNextJobs(db: DbName, count: number, reason: string, kind?: CompactionObject["kind"]): void {
    const list = this.faults.get(db) ?? [];
    list.push({ kind, remaining: count, reason });
    this.faults.set(db, list);
  }

  // --- synchronous write API ---------------------------------------------------

  dbExists(name: DbName): boolean {
    return this.dbs.has(name);
  }

  /**
   * How many dbs were deleted so far. A writer that saw its db exist need
   * not ask again until this changes (the workload asked before every write).
   */
  deletedDbCount(): number {
    return this.dbsDeleted;
  }

  createDb(name: DbName, options: { readonly diskFormatVersion?: number } = {}): CreateDbResult {
    const problem = dbNameProblem(name);
    if (problem !== undefined) return { ok: false, error: "illegal_database_name", reason: problem };
    if (this.dbs.has(name)) return { ok: false, error: "file_exists", reason: "The database could not be created, the file already exists." };
    this.dbs.set(name, {
      data: new MemoryDatabase(name, this.model, { diskFormatVersion: options.diskFormatVersion }, this.ledger.dbs),
      views: new DbViews(this.model, this.ledger.views),
      updated: Object.freeze({ type: "db-updated", db: name }),
    });
    this.hub.emit({ type: "db-created", db: name });
    return { ok: true };
  }

  /** Returns false when there was no such db. Running jobs on it fail ("database deleted"). */
  deleteDb(name: DbName): boolean {
    const stored = this.dbs.get(name);
    if (stored === undefined) return false;
    this.dbs.delete(name);
    stored.data.detach();
    stored.views.detach();
    this.dbsDeleted++;
    this.autoIndex?.forget(name);
    this.faults.delete(name);
    for (const job of [...this.jobs.values()]) {
      if (job.description.db === name) job.fail(`database ${name} was deleted`);
    }
    this.hub.emit({ type: "db-deleted", db: name });
    return true;
  }

  /** `_bulk_docs` (new_edits=true), synchronous. A missing db fails every doc with `not_found`. */
  writeDocs(db: DbName, docs: readonly unknown[]): DocWriteResult[] {
    const stored = this.dbs.get(db);
    if (stored === undefined) {
      return docs.map((doc) => ({ id: idOf(doc), ok: false, error: "not_found", reason: "Database does not exist." }));
    }
    const { results, written } = stored.data.writeBatch(docs);
    if (written.length === 0) return results;
    // Most batches hold no design doc: no list of them is made then.
    const ddocsWritten = written.some((record) => isDesignDocId(record.id)) ? written.filter((record) => isDesignDocId(record.id)) : [];
    for (const record of ddocsWritten) stored.views.onDesignDocWritten(record);
    this.hub.emit(stored.updated);
    for (const record of ddocsWritten) this.hub.emit({ type: "ddoc-updated", db, ddoc: record.id });
    this.scheduleIndexing(db);
    return results;
  }

  putDoc(db: DbName, doc: DocWrite): DocWriteResult {
    return this.single(this.writeDocs(db, [doc]), doc._id);
  }

  deleteDoc(db: DbName, id: string, rev: string): DocWriteResult {
    return this.single(this.writeDocs(db, [{ _id: id, _rev: rev, _deleted: true }]), id);
  }

  /** Write a design doc; `ddoc` with or without its `_design/` prefix. */
  putDesignDoc(db: DbName, ddoc: string, body: Readonly<Record<string, unknown>>, rev?: string): DocWriteResult {
    const id = ddoc.startsWith(DESIGN_PREFIX) ? ddoc : `${DESIGN_PREFIX}${ddoc}`;
    const doc: Record<string, unknown> = { ...body, _id: id };
    if (rev !== undefined) doc["_rev"] = rev;
    return this.single(this.writeDocs(db, [doc]), id);
  }

  /**
   * Bring the db's view indexes up to date now (sharing any update in
   * flight); resolves with the design docs whose index grew, each of which
   * also got a `view-updated` event.
   */
  buildViews(db: DbName): Promise<DesignDocId[]> {
    return this.views.buildViews(db);
  }

  /** Simulate an index built with an old collator: its info reports `needsUpgrade` until compacted. */
  setViewNeedsUpgrade(db: DbName, ddoc: DesignDocId, needsUpgrade = true): boolean {
    const index = this.dbs.get(db)?.views.indexFor(ddoc);
    if (index === undefined) return false;
    index.needsUpgrade = needsUpgrade;
    return true;
  }

  /** Stop auto-indexing and dispose the compiled map functions (the store's own sandbox thread ends). Data stays. */
  close(): void {
    this.autoIndex?.close();
    this.sandboxes.close();
  }

  // --- ViewStore -------------------------------------------------------------------

  async queryView(db: DbName, ddoc: DesignDocId, view: string, query: ViewQuery): Promise<ViewResult> {
    this.guard("queryView");
    return this.views.queryView(db, ddoc, view, query);
  }

  async viewGroupInfo(db: DbName, ddoc: DesignDocId): Promise<ViewGroupInfo> {
    this.guard("viewGroupInfo");
    return this.views.viewGroupInfo(db, ddoc);
  }

  async updateViewGroup(db: DbName, ddoc: DesignDocId): Promise<{ readonly indexSeq: number }> {
    this.guard("updateViewGroup");
    return this.views.updateViewGroup(db, ddoc);
  }

  // --- observation -------------------------------------------------------------

  /** Bytes of every db and view index file in the store (stale index files included): O(1), kept running. */
  totals(): StoreTotals {
    return this.ledger.snapshot();
  }

  /**
   * `totals()` counted afresh from every file, in O(dbs): what the running
   * totals must always equal (the tests hold them to it).
   */
  recountTotals(): StoreTotals {
    let dbFileBytes = 0;
    let dbActiveBytes = 0;
    let viewFileBytes = 0;
    let viewActiveBytes = 0;
    let dbAppendedBytes = 0;
    for (const { data, views } of this.dbs.values()) {
      dbFileBytes += data.fileBytes;
      dbActiveBytes += data.activeBytes;
      dbAppendedBytes += data.appendedBytesTotal;
      const viewTotals = views.totals();
      viewFileBytes += viewTotals.fileBytes;
      viewActiveBytes += viewTotals.activeBytes;
    }
    return { dbFileBytes, dbActiveBytes, viewFileBytes, viewActiveBytes, dbAppendedBytes };
  }

  /** Bytes on "disk": db files plus view index files (stale ones too). */
  totalFileBytes(): number {
    const totals = this.totals();
    return totals.dbFileBytes + totals.viewFileBytes;
  }

  /** What compacting and cleaning everything would leave (about). */
  totalActiveBytes(): number {
    const totals = this.totals();
    return totals.dbActiveBytes + totals.viewActiveBytes;
  }

  /** Running jobs, after CouchDB's `_active_tasks`. */
  activeTasks(): JobStatus[] {
    return [...this.jobs.values()].map((job) => job.status());
  }

  // --- CompactionStore -----------------------------------------------------------

  async listDbs(): Promise<DbName[]> {
    this.guard("listDbs");
    return [...this.dbs.keys()].sort();
  }

  async dbInfo(db: DbName): Promise<DbInfo | undefined> {
    this.guard("dbInfo");
    const info = this.infoOf(db);
    this.unannounced?.noteRead(db);
    return info;
  }

  /** With `jobLookIntervalMs`: the reads a CouchDB client's compaction watcher would have made by itself (none while the daemon looks). */
  jobWatcherOwnReads(): number {
    return this.unannounced?.ownReads ?? 0;
  }

  // --- DbListing (the db updates feed's reconciliation) --------------------------------

  /** The db names in `_all_dbs` order, kept while no event says the list may have changed (a pass over 100,000 dbs sorts once). */
  private sortedNames: { readonly atEvent: number; readonly names: readonly DbName[] } | undefined;

  async listDbsAfter(after: DbName | undefined, limit: number): Promise<DbName[]> {
    this.guard("listDbsAfter");
    if (this.sortedNames?.atEvent !== this.hub.emitted) this.sortedNames = { atEvent: this.hub.emitted, names: sortDbNames(this.dbs.keys()) };
    const names = this.sortedNames.names;
    const from = after === undefined ? 0 : indexAfter(names, after);
    return names.slice(from, from + Math.max(0, limit));
  }

  async dbUpdateSeqs(dbs: readonly DbName[]): Promise<Map<DbName, string>> {
    this.guard("dbUpdateSeqs");
    const seqs = new Map<DbName, string>();
    for (const db of dbs) {
      const stored = this.dbs.get(db);
      if (stored !== undefined) seqs.set(db, String(stored.data.updateSeq));
    }
    return seqs;
  }

  async dbInfos(dbs: readonly DbName[]): Promise<Map<DbName, DbInfo>> {
    this.guard("dbInfos");
    const infos = new Map<DbName, DbInfo>();
    for (const db of dbs) {
      const info = this.infoOf(db);
      if (info !== undefined) infos.set(db, info);
    }
    if (this.unannounced !== undefined) for (const db of dbs) this.unannounced.noteRead(db);
    return infos;
  }

  async designDocs(db: DbName): Promise<DesignDoc[]> {
    this.guard("designDocs");
    const stored = this.dbs.get(db);
    if (stored === undefined) return [];
    const ddocs: DesignDoc[] = [];
    for (const id of stored.data.designDocIds()) {
      const record = stored.data.getDoc(id);
      if (record !== undefined && !record.deleted) ddocs.push({ id, rev: record.rev, body: bodyOf(record) });
    }
    return ddocs;
  }

  async viewIndexInfo(db: DbName, ddoc: DesignDocId): Promise<ViewIndexInfo | undefined> {
    this.guard("viewIndexInfo");
    const index = this.dbs.get(db)?.views.indexFor(ddoc);
    if (index === undefined) return undefined;
    return {
      db,
      ddoc,
      signature: index.signature,
      fileBytes: index.fileBytes,
      activeBytes: index.activeBytes,
      updateSeqNumber: index.seq,
      compactionRunning: this.jobs.has(viewJobKey(db, index.signature)),
      updaterRunning: index.update.isRunning,
      needsUpgrade: index.needsUpgrade,
    };
  }

  async startJob(object: CompactionObject): Promise<JobHandle> {
    this.guard("startJob");
    const stored = this.dbs.get(object.db);
    if (stored === undefined) throw new NotFoundError(`database ${JSON.stringify(object.db)} does not exist`);
    switch (object.kind) {
      case "db":
        return this.startDbCompaction(object.db, stored);
      case "view":
        return this.startViewCompaction(object.db, object.ddoc, stored);
      case "cleanup":
        return this.startCleanup(object.db, stored);
      default:
        throw new Error(`startJob: unknown object kind ${JSON.stringify((object as { kind: unknown }).kind)}`);
    }
  }

  async attachJob(object: CompactionObject): Promise<JobHandle> {
    this.guard("attachJob");
    const key = this.jobKeyOf(object);
    const job = key === undefined ? undefined : this.jobs.get(key);
    if (job === undefined) return finishedHandle();
    return object.kind === "db" ? this.dbJobHandle(object.db, job.handle) : job.handle;
  }

  // --- DocumentStore -----------------------------------------------------------

  async ensureDb(db: DbName): Promise<void> {
    this.guard("ensureDb");
    if (this.dbs.has(db)) return;
    const created = this.createDb(db);
    if (!created.ok) throw new Error(`${created.error}: ${created.reason}`);
  }

  async getDoc(db: DbName, id: string): Promise<StoredDoc | undefined> {
    this.guard("getDoc");
    const record = this.dbs.get(db)?.data.getDoc(id);
    return record === undefined || record.deleted ? undefined : toStoredDoc(record);
  }

  /** The latest revision, a deletion included (`_deleted: true`): CouchDB's 404 `deleted` vs `missing`, `?rev=` of a tombstone. */
  async getDocOrTombstone(db: DbName, id: string): Promise<StoredDoc | undefined> {
    this.guard("getDocOrTombstone");
    const record = this.dbs.get(db)?.data.getDoc(id);
    return record === undefined ? undefined : toStoredDoc(record);
  }

  async bulkDocs(db: DbName, docs: readonly DocWrite[]): Promise<DocWriteResult[]> {
    this.guard("bulkDocs");
    if (!this.dbs.has(db)) throw new NotFoundError(`database ${JSON.stringify(db)} does not exist`);
    return this.writeDocs(db, docs);
  }

  async changes(db: DbName, query: ChangesQuery): Promise<ChangesPage> {
    this.guard("changes");
    return this.existing(db).data.changes(query);
  }

  async currentSeq(db: DbName): Promise<string> {
    this.guard("currentSeq");
    return String(this.existing(db).data.updateSeq);
  }

  // --- internals -----------------------------------------------------------------

  private guard(operation: string): void {
    if (!this.available) throw new StoreUnavailableError(operation);
  }

  private existing(db: DbName): StoredDb {
    const stored = this.dbs.get(db);
    if (stored === undefined) throw new NotFoundError(`database ${JSON.stringify(db)} does not exist`);
    return stored;
  }

  private single(results: DocWriteResult[], id: string): DocWriteResult {
    return results[0] ?? { id, ok: false, error: "bad_request", reason: "no result" };
  }

  private infoOf(db: DbName): DbInfo | undefined {
    const stored = this.dbs.get(db);
    if (stored === undefined) return undefined;
    const data = stored.data;
    return {
      db,
      fileBytes: data.fileBytes,
      activeBytes: data.activeBytes,
      updateSeq: String(data.updateSeq),
      updateSeqNumber: data.updateSeq,
      // CouchDB shards report compacted_seq 0 until their first compaction.
      compactedSeqNumber: data.compactedSeq ?? 0,
      docCount: data.docCount,
      docDelCount: data.docDelCount,
      compactionRunning: this.jobs.has(dbJobKey(db)),
      diskFormatVersion: data.diskFormatVersion,
      needsUpgrade: data.needsUpgrade,
    };
  }

  private jobKeyOf(object: CompactionObject): string | undefined {
    switch (object.kind) {
      case "db":
        return dbJobKey(object.db);
      case "cleanup":
        return cleanupJobKey(object.db);
      case "view": {
        const index = this.dbs.get(object.db)?.views.indexFor(object.ddoc);
        return index === undefined ? undefined : viewJobKey(object.db, index.signature);
      }
      default:
        return undefined;
    }
  }

  private startDbCompaction(db: DbName, stored: StoredDb): JobHandle {
    const key = dbJobKey(db);
    const running = this.jobs.get(key);
    if (running !== undefined) return this.dbJobHandle(db, running.handle);
    const data = stored.data;
    const cost = dbCompactionCost(this.model);
    const target: JobTarget = {
      // Tombstones are copied too.
      initialDurationMs: compactionDurationMs(cost, data.activeBytes, data.docCount + data.docDelCount),
      cost,
      appendedBytesTotal: () => data.appendedBytesTotal,
      finish: () => data.applyCompaction(),
    };
    return this.dbJobHandle(db, this.launch({ key, kind: "db", db }, target).handle);
  }

  /** A db compaction's handle as the caller gets it: with `jobLookIntervalMs`, its end is seen as on CouchDB. */
  private dbJobHandle(db: DbName, handle: JobHandle): JobHandle {
    return this.unannounced === undefined ? handle : this.unannounced.watch(db, handle);
  }

  private startViewCompaction(db: DbName, ddoc: DesignDocId, stored: StoredDb): JobHandle {
    const index = stored.views.indexFor(ddoc);
    if (index === undefined) throw new NotFoundError(`design doc ${JSON.stringify(ddoc)} in ${JSON.stringify(db)} has no view index`);
    const key = viewJobKey(db, index.signature);
    const running = this.jobs.get(key);
    if (running !== undefined) return running.handle;
    const cost = viewCompactionCost(this.model);
    const target: JobTarget = {
      initialDurationMs: compactionDurationMs(cost, index.activeBytes, index.rowCount),
      cost,
      appendedBytesTotal: () => index.appendedBytesTotal,
      finish: () => index.compact(),
    };
    return this.launch({ key, kind: "view", db, ddoc }, target).handle;
  }

  private startCleanup(db: DbName, stored: StoredDb): JobHandle {
    const key = cleanupJobKey(db);
    const running = this.jobs.get(key);
    if (running !== undefined) return running.handle;
    const target: JobTarget = {
      initialDurationMs: this.model.cleanupDurationMs,
      // Nothing is appended to a directory of index files, so there is no catch-up pass to price.
      cost: dbCompactionCost(this.model),
      appendedBytesTotal: () => 0,
      // Index files being compacted or updated are in use: CouchDB's cleanup leaves open files alone too.
      finish: () => stored.views.cleanup((index) => index.update.isRunning || this.jobs.has(viewJobKey(db, index.signature))),
    };
    return this.launch({ key, kind: "cleanup", db }, target).handle;
  }

  private launch(description: CompactionJob["description"], target: JobTarget): CompactionJob {
    const job = new CompactionJob(this.scheduler, this.model, description, target, {
      takeFault: () => this.takeFault(description.db, description.kind),
      ended: (ended) => {
        if (this.jobs.get(description.key) === ended) this.jobs.delete(description.key);
      },
    });
    this.jobs.set(description.key, job);
    return job;
  }

  private takeFault(db: DbName, kind: CompactionObject["kind"]): string | undefined {
    const list = this.faults.get(db);
    const fault = list?.find((candidate) => candidate.remaining > 0 && (candidate.kind === undefined || candidate.kind === kind));
    if (list === undefined || fault === undefined) return undefined;
    fault.remaining--;
    const left = list.filter((candidate) => candidate.remaining > 0);
    if (left.length === 0) this.faults.delete(db);
    else this.faults.set(db, left);
    return fault.reason;
  }

  private scheduleIndexing(db: DbName): void {
    // Looked up again: a listener of the events just emitted may have deleted (or re-created) the db.
    if (this.autoIndex === undefined || this.dbs.get(db)?.views.hasViews() !== true) return;
    this.autoIndex.schedule(db);
  }
}

const dbJobKey = (db: DbName): string => `db\u0000${db}`;
const viewJobKey = (db: DbName, signature: string): string => `view\u0000${db}\u0000${signature}`;
const cleanupJobKey = (db: DbName): string => `cleanup\u0000${db}`;
