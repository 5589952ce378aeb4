/**
 * What CouchDB's document routes need from a store: the subset of the
 * document API that indexing needs (dbs, docs, bulk writes, `_all_docs`,
 * `_changes` with longpoll waiting). The memory store implements it
 * (src/adapters/memory/document-api.ts) and the runtime wires the two
 * (src/runtime/documents/subsystem.ts); against CouchDB, CouchDB serves
 * documents itself.
 *
 * Everything CouchDB-specific about the answers (shapes, ordering, ranges,
 * filters, errors) is the routes' job; a store only stores. When a store
 * cannot answer at all (switched off), its methods reject with a `Refusal`
 * (`status`, `error`, `reason`: CouchDB's 503 body); any other rejection is
 * a bug and answers 500.
 */
import type { ChangeRow, DocWrite, DocWriteResult, StoredDoc } from "./store.js";

export type { ChangeRow, DocWrite, DocWriteResult, StoredDoc };

/** `GET /{db}`'s numbers (CouchDB's JSON is built from these in db-info.ts). */
export interface DocumentDbInfo {
  readonly db: string;
  /** Opaque; what `_changes` accepts as `since`. */
  readonly updateSeq: string;
  readonly purgeSeq: string;
  readonly fileBytes: number;
  readonly activeBytes: number;
  /** CouchDB: the uncompressed size of the live documents' bodies. */
  readonly externalBytes: number;
  readonly docCount: number;
  readonly docDelCount: number;
  readonly compactionRunning: boolean;
  readonly diskFormatVersion: number;
  readonly instanceStartTime: string;
}

export type CreateDbOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: "file_exists" | "illegal_database_name"; readonly reason: string };

/** A live document's latest revision. */
export interface DocRevision {
  readonly id: string;
  readonly rev: string;
}

/** Every change after `since`, one row per document at its latest seq. */
export interface ChangesSlice {
  readonly rows: readonly ChangeRow[];
  /** The seq `since` stood for (`now` resolved). */
  readonly since: string;
  /** The db's seq. */
  readonly lastSeq: string;
}

/**
 * How a wait for a change ended: `changed` (the db moved past the seq; it
 * may still have nothing a filter wants), `timeout`, `aborted` (the client
 * went away), `gone` (the db was deleted).
 */
export type WaitOutcome = "changed" | "timeout" | "aborted" | "gone";

/** One open database. A db deleted meanwhile answers as empty, and waits end with `gone`. */
export interface DocumentDb {
  /** `undefined` once the db was deleted. */
  info(): Promise<DocumentDbInfo | undefined>;
  /** The latest revision, a deletion included (`_deleted: true`); `undefined` for a doc never written. */
  getDoc(id: string): Promise<StoredDoc | undefined>;
  /** `_bulk_docs` with `new_edits=true`: one result per doc, in order; conflicts are results, not rejections. */
  writeDocs(docs: readonly DocWrite[]): Promise<readonly DocWriteResult[]>;
  /** Every live document (deleted ones left out), in any order. */
  liveDocs(): Promise<readonly DocRevision[]>;
  /** `since`: `now`, `0`, or a seq this db gave out (validated by the caller). Ascending seq order. */
  changes(since: string): Promise<ChangesSlice>;
  /**
   * Resolves once the db's seq passes `since` (at once if it already has),
   * after `timeoutMs`, when `signal` aborts, or when the db is deleted.
   * `onWaiting` is called once the wait is in place (a longpoll then sends
   * its headers); a store that refuses the wait (too many waiters: 503)
   * rejects before it.
   */
  waitForChange(since: string, wait: WaitOptions): Promise<WaitOutcome>;
}

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly onWaiting?: (() => void) | undefined;
}

export interface DocumentApi {
  /** Every db name, in any order. */
  listDbs(): Promise<readonly string[]>;
  createDb(db: string): Promise<CreateDbOutcome>;
  /** False when there was no such db. */
  deleteDb(db: string): Promise<boolean>;
  /** `undefined` when the db does not exist (CouchDB's 404 `Database does not exist.`). */
  openDb(db: string): Promise<DocumentDb | undefined>;
}

/** A store's refusal with CouchDB's body, e.g. 503 `service_unavailable` while it is switched off. */
export interface Refusal {
  readonly status: number;
  readonly error: string;
  readonly reason: string;
}

export const isRefusal = (value: unknown): value is Refusal =>
  value instanceof Error &&
  typeof (value as Partial<Refusal>).status === "number" &&
  typeof (value as Partial<Refusal>).error === "string" &&
  typeof (value as Partial<Refusal>).reason === "string";
