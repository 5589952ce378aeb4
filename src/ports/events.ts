/**
 * The event source port: a stream of what happens in the store.
 *
 * The memory store emits these as it is written. The CouchDB adapter derives
 * them from `/_db_updates` (or by polling where that is missing) and design doc
 * changes. Delivery is at-least-once: consumers tolerate repeats.
 */
import type { DbName, DesignDocId } from "../core/compaction/types.js";

export type StoreEvent =
  | { readonly type: "db-created"; readonly db: DbName }
  | { readonly type: "db-updated"; readonly db: DbName }
  | { readonly type: "db-deleted"; readonly db: DbName }
  | { readonly type: "ddoc-updated"; readonly db: DbName; readonly ddoc: DesignDocId }
  /** A view index group committed new data (it grew). */
  | { readonly type: "view-updated"; readonly db: DbName; readonly ddoc: DesignDocId };

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
