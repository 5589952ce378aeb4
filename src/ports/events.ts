/**
 * The event source port: a stream of what happens in the store.
 *
 * The memory store emits these as it is written. The CouchDB adapter derives
 * them from `/_db_updates` (or by polling where that is missing) and design doc
 * changes. Delivery is at-least-once: consumers tolerate repeats.
 *
 * Not every source can promise it never misses an event: CouchDB's own
 * `_db_updates` drops what its global_changes had buffered when CouchDB
 * restarts, and the memory store drops the oldest events it held past its
 * bound while unavailable. Such a source says so with `source-resumed`,
 * delivered after a reconnect, a replay that had to resync, or a dropped
 * batch (never for the first connection: consumers that need completeness
 * reconcile at their own start anyway). A consumer that needs every db event
 * (the db updates feed) then compares what it knows with the store's db list
 * (`DbListing` in store.ts); the others ignore it.
 */
import type { DbName, DesignDocId } from "../core/compaction/types.js";

export type StoreEvent =
  | { readonly type: "db-created"; readonly db: DbName }
  | { readonly type: "db-updated"; readonly db: DbName }
  | { readonly type: "db-deleted"; readonly db: DbName }
  | { readonly type: "ddoc-updated"; readonly db: DbName; readonly ddoc: DesignDocId }
  /** A view index group committed new data (it grew). */
  | { readonly type: "view-updated"; readonly db: DbName; readonly ddoc: DesignDocId }
  /**
   * Events may have been missed just before this one (see the file comment);
   * `reason` is for logs. It concerns no db: `db` is never set (declared
   * absent so that `event.db` reads on any event, as tests do, still type-check).
   */
  | { readonly type: "source-resumed"; readonly reason: string; readonly db?: undefined };

export type StoreEventListener = (event: StoreEvent) => void;

/** How the source currently learns about changes, shown in status. */
export interface EventSourceStatus {
  /** e.g. `push` (memory store), `db_updates` (CouchDB feed), `polling` (fallback). */
  readonly mode: string;
  readonly connected: boolean;
  readonly detail?: string | undefined;
}

export interface EventSource {
  /** Begin delivering events to `listener`. Resolves once the source is following. */
  start(listener: StoreEventListener): Promise<void>;
  /** Stop delivering; resolves when no more events will come. */
  stop(): Promise<void>;
  status(): EventSourceStatus;
}
