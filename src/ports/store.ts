/**
 * The store port: what upholster needs from a CouchDB-style database server.
 *
 * Implemented by `src/adapters/memory` (the embedded default, and the store of
 * simulations) and `src/adapters/couchdb-http` (a real CouchDB or PouchDB
 * Server). Adapters decode whatever their backend says into these types; a
 * method rejects (never throws synchronously) when the backend fails, and the
 * runtime turns that into an event for the core, so one bad database never
 * stops the daemon.
 */
import type { CompactionObject, DbName, DesignDocId } from "../core/compaction/types.js";

export type { CompactionObject, DbName, DesignDocId };

/** Database info, as `GET /{db}` reports it (sizes in bytes). */
export interface DbInfo {
  readonly db: DbName;
  /** `sizes.file`: bytes on disk, garbage included. */
  readonly fileBytes: number;
  /** `sizes.active`: bytes of live data; what `fileBytes` falls to after compaction (about). */
  readonly activeBytes: number;
  /** The store's own update sequence, opaque (CouchDB clusters: `N-g1AAA...`). */
  readonly updateSeq: string;
  /** The numeric part of `updateSeq` (the sum over shards in a cluster). */
  readonly updateSeqNumber: number;
  /** Numeric update seq at the last compaction, when the store (or the adapter) knows it. */
  readonly compactedSeqNumber?: number | undefined;
  readonly docCount: number;
  readonly docDelCount: number;
  readonly compactionRunning: boolean;
  readonly diskFormatVersion?: number | undefined;
  /** The file is in an old on-disk format: compacting it upgrades it. */
  readonly needsUpgrade: boolean;
}

/** A design document: id, revision and body (the body feeds the index backends of later issues). */
export interface DesignDoc {
  readonly id: DesignDocId;
  readonly rev: string;
  readonly body: Readonly<Record<string, unknown>>;
}

/** View index group info, as `GET /{db}/_design/{ddoc}/_info` reports it. */
export interface ViewIndexInfo {
  readonly db: DbName;
  readonly ddoc: DesignDocId;
  readonly signature: string;
  readonly fileBytes: number;
  readonly activeBytes: number;
  readonly updateSeqNumber: number;
  readonly compactionRunning: boolean;
  readonly updaterRunning: boolean;
  /** Built with more than one collator version, or an old format. */
  readonly needsUpgrade: boolean;
}

/** How a compaction (or cleanup) job ended. */
export type JobOutcome =
  | { readonly ok: true; readonly reclaimedBytes?: number | undefined }
  | { readonly ok: false; readonly reason: string };

/**
 * A running job. `done` settles (never rejects) when the job ends.
 * `suspend`, `resume` and `cancel` exist only where the store can do them:
 * CouchDB's HTTP API cannot pause or abort a compaction; the memory store can.
 */
export interface JobHandle {
  readonly done: Promise<JobOutcome>;
  suspend?(): Promise<void>;
  resume?(): Promise<void>;
  cancel?(): Promise<void>;
}

/** What the compaction daemon needs. */
export interface CompactionStore {
  /** Every database (not shard) name. */
  listDbs(): Promise<DbName[]>;
  /** `undefined` when the db does not exist. */
  dbInfo(db: DbName): Promise<DbInfo | undefined>;
  /** Many at once where the store can batch (CouchDB `POST /_dbs_info`, `dbInfosBatchSize` a call). Missing dbs are absent. */
  dbInfos?(dbs: readonly DbName[]): Promise<Map<DbName, DbInfo>>;
  /**
   * The most dbs one request of `dbInfos` reads (CouchDB: the server's
   * `[chttpd] max_db_number_for_dbs_info_req`, 100 by default). The daemon
   * packs its checks to it; more names in one call cost more requests.
   * Absent: 100.
   */
  readonly dbInfosBatchSize?: number | undefined;
  /** The design documents of a db; `[]` when it has none or does not exist. */
  designDocs(db: DbName): Promise<DesignDoc[]>;
  /** `undefined` when the design doc or its index does not exist. */
  viewIndexInfo(db: DbName, ddoc: DesignDocId): Promise<ViewIndexInfo | undefined>;
  /**
   * Start compacting a db or view group, or run view cleanup (`POST /{db}/_view_cleanup`).
   * Never asked for a geo index file: the daemon compacts those through `GeoIndexFiles`.
   */
  startJob(object: CompactionObject): Promise<JobHandle>;
  /** Watch a compaction of `object` that is already running (started by someone else). */
  attachJob(object: CompactionObject): Promise<JobHandle>;
  /**
   * Set by a store that sees a db compaction end only in the db's info
   * (CouchDB): how often it wants that info read. The daemon then reads it
   * itself, batched with other reads (see `src/core/compaction/job-looks.ts`),
   * and the job's watcher reads on its own only when no such read came.
   */
  readonly jobLookIntervalMs?: number | undefined;
}

/** A document as stored: CouchDB's JSON with `_id` and `_rev`. */
export interface StoredDoc {
  readonly _id: string;
  readonly _rev: string;
  readonly _deleted?: boolean;
  readonly [field: string]: unknown;
}

/** A document to write: with `_rev` to update, without to create. */
export interface DocWrite {
  readonly _id: string;
  readonly _rev?: string | undefined;
  readonly _deleted?: boolean;
  readonly [field: string]: unknown;
}

export type DocWriteResult =
  | { readonly id: string; readonly ok: true; readonly rev: string }
  | { readonly id: string; readonly ok: false; readonly error: "conflict" | string; readonly reason?: string };

/** One row of a db's changes feed. */
export interface ChangeRow {
  readonly id: string;
  /** Opaque; pass back as `since`. */
  readonly seq: string;
  readonly deleted?: boolean;
  readonly rev: string;
  /** With `includeDocs`: the document at `rev` (a deletion: `_deleted: true`). */
  readonly doc?: StoredDoc | undefined;
}

export interface ChangesQuery {
  /** Opaque seq, or `"0"`/undefined for the start, or `"now"`. */
  readonly since?: string | undefined;
  readonly limit?: number | undefined;
  readonly descending?: boolean | undefined;
  /** `include_docs=true`: each row carries its document (`doc`). */
  readonly includeDocs?: boolean | undefined;
}

export interface ChangesPage {
  readonly results: readonly ChangeRow[];
  readonly lastSeq: string;
}

/**
 * Plain document storage, used by the db updates feed to keep its
 * `_global_changes`-style database (one doc per event key, updated in place).
 */
export interface DocumentStore {
  /** Create the db if missing; succeed if it exists. */
  ensureDb(db: DbName): Promise<void>;
  getDoc(db: DbName, id: string): Promise<StoredDoc | undefined>;
  /** `POST /{db}/_bulk_docs`: per-doc results, conflicts reported, never thrown. */
  bulkDocs(db: DbName, docs: readonly DocWrite[]): Promise<DocWriteResult[]>;
  /** One page of the db's changes feed, latest revision per doc (as CouchDB's `_changes`). */
  changes(db: DbName, query: ChangesQuery): Promise<ChangesPage>;
  /** The db's current update seq (opaque), for `since=now` and ETags. */
  currentSeq(db: DbName): Promise<string>;
}

/**
 * The db list in pages, for consumers that compare what they know with the
 * store (the db updates feed's reconciliation after a `source-resumed`).
 * Bounded calls: one page, one batch of seqs at a time.
 */
export interface DbListing {
  /**
   * Up to `limit` db names strictly after `after` (from the first when
   * undefined), in `_all_dbs` order (UTF-8 byte order: `compareDbNames` in
   * src/core/db-updates/db-order.ts). Fewer than `limit` means the end of the
   * list. Only dbs the store's event source reports events for (CouchDB:
   * `_global_changes` is left out); clustered dbs, whatever the granularity.
   */
  listDbsAfter(after: DbName | undefined, limit: number): Promise<DbName[]>;
  /** Each existing db's update seq, opaque (CouchDB `N-g1AAA...`); missing dbs are absent. Batched where the store can. */
  dbUpdateSeqs(dbs: readonly DbName[]): Promise<Map<DbName, string>>;
  /** Dbs one request of `dbUpdateSeqs` reads (as `CompactionStore.dbInfosBatchSize`); absent: 100. */
  readonly dbInfosBatchSize?: number | undefined;
}

/** A store that can do both: what the runtime is given. */
export type Store = CompactionStore & DocumentStore;
