/**
 * The compaction core's vocabulary: what it is told (events), what it asks the
 * shell to do (effects), and the facts it reasons about (objects and infos).
 *
 * This file is the contract between the pure core (`src/core/compaction`) and
 * the shell (`src/runtime`). Everything here is plain data: serialisable,
 * comparable, replayable.
 */

import type { SmooshConfig } from "./config.js";
import type { SmooshSnapshot } from "./snapshot.js";

export type DbName = string;
/** A design document id, always with its prefix: `_design/foo`. */
export type DesignDocId = string;

/**
 * Something smoosh can compact: a database, a view index group, the index
 * cleanup of a db, or a geo index file (upholster's hastings indexes, one per
 * signature; CouchDB's smoosh has none). Geo files go through the view
 * channels: see `channelKindOf` in object.ts.
 */
export type CompactionObject =
  | { readonly kind: "db"; readonly db: DbName }
  | { readonly kind: "view"; readonly db: DbName; readonly ddoc: DesignDocId }
  | { readonly kind: "cleanup"; readonly db: DbName }
  | { readonly kind: "geo"; readonly db: DbName; readonly signature: string };

/** Facts about a database needed for its priority (see `priority.ts`). */
export interface DbSizeInfo {
  readonly kind: "db";
  readonly fileBytes: number;
  readonly activeBytes: number;
  /** Numeric update sequence (the `N` of CouchDB's opaque `N-...` clustered seq). */
  readonly updateSeq: number;
  /** Update sequence at the last compaction, when known. `min_changes` is skipped when unknown. */
  readonly compactedSeq?: number | undefined;
  /** The file is in an old on-disk format and compaction would upgrade it. */
  readonly needsUpgrade: boolean;
  /** A compaction of this object is already running on the store (started by someone else). */
  readonly compactionRunning: boolean;
}

/** Facts about a view index group. */
export interface ViewSizeInfo {
  readonly kind: "view";
  readonly fileBytes: number;
  readonly activeBytes: number;
  /** Built with an old collator or disk format: an upgrade channel takes it. */
  readonly needsUpgrade: boolean;
  readonly compactionRunning: boolean;
}

/** Facts about a geo index file: sized like a view group; never in an old format. */
export interface GeoSizeInfo {
  readonly kind: "geo";
  readonly fileBytes: number;
  readonly activeBytes: number;
  /** The seq the index reflects (logs and growth; no rule reads it). */
  readonly updateSeq: number;
  /** Only upholster compacts geo files: a running one is left to end, never adopted. */
  readonly compactionRunning: boolean;
}

/** Facts about a db's index cleanup: there is nothing to size, only whether the db still exists. */
export interface CleanupInfo {
  readonly kind: "cleanup";
}

export type ObjectInfo = DbSizeInfo | ViewSizeInfo | GeoSizeInfo | CleanupInfo;

/** The kinds of channel (`db_channels`, `view_channels`, `cleanup_channels`); geo files use view channels. */
export type ChannelKind = "db" | "view" | "cleanup";

/** Why the core asked for a list of databases or design documents. */
export type ListPurpose = "enqueue-all-dbs" | "enqueue-all-views" | "rescan";

/**
 * Why the core asked for an object's info: to decide whether to queue it, to
 * re-check it before starting it, (watch) to read a running compaction's db
 * for a store that sees the job end that way (the core ignores that answer),
 * or (precheck-ahead) to read a full channel's next item along with such a
 * look, so that the start after the job's end needs no precheck of its own.
 */
export type FetchPurpose = "enqueue" | "precheck" | "watch" | "precheck-ahead";

export type LogLevel = "debug" | "info" | "warn" | "error";

/** One answer to a `fetch-info`: the info (`missing`: gone), or why it could not be had. */
export type InfoAnswer =
  | { readonly requestId: number; readonly info: ObjectInfo | "missing" }
  | { readonly requestId: number; readonly error: string };

/** Events: everything the core learns, always with the time it is learnt passed beside it. */
export type SmooshEvent =
  /**
   * A db was written (`count` update events, default 1), a view index committed,
   * or an operator asked for it (`force`: checked at once, outside the check budget).
   */
  | { readonly type: "object-updated"; readonly object: CompactionObject; readonly force?: boolean; readonly count?: number }
  /** Many objects' updates at once (the shell coalesces a burst of store events into one step). */
  | { readonly type: "objects-updated"; readonly updates: readonly { readonly object: CompactionObject; readonly count: number }[] }
  | { readonly type: "db-created"; readonly db: DbName }
  | { readonly type: "db-deleted"; readonly db: DbName }
  | { readonly type: "design-doc-updated"; readonly db: DbName; readonly ddoc: DesignDocId }
  | {
      readonly type: "info-fetched";
      readonly requestId: number;
      /** `missing`: the db, design doc or index no longer exists. */
      readonly info: ObjectInfo | "missing";
    }
  | { readonly type: "info-failed"; readonly requestId: number; readonly error: string }
  /** The answers to one request that carried many objects (a `_dbs_info` batch), in one step. */
  | { readonly type: "infos-fetched"; readonly answers: readonly InfoAnswer[] }
  | { readonly type: "job-started"; readonly jobId: number }
  | { readonly type: "job-start-failed"; readonly jobId: number; readonly error: string }
  | { readonly type: "job-finished"; readonly jobId: number; readonly reclaimedBytes?: number }
  | { readonly type: "job-failed"; readonly jobId: number; readonly error: string }
  | { readonly type: "dbs-listed"; readonly purpose: ListPurpose; readonly dbs: readonly DbName[] }
  | {
      readonly type: "design-docs-listed";
      readonly purpose: ListPurpose;
      readonly db: DbName;
      readonly ddocs: readonly DesignDocId[];
      /** The signatures of the db's geo index files, listed with its design docs (absent: no geo indexes here). */
      readonly geoSignatures?: readonly string[];
    }
  | { readonly type: "list-failed"; readonly purpose: ListPurpose; readonly db?: DbName; readonly error: string }
  | { readonly type: "tick" }
  /** The store's event source may have missed events (a reconnect): look at every db again, under the budget. */
  | { readonly type: "events-missed" }
  | { readonly type: "config-changed"; readonly config: SmooshConfig }
  | { readonly type: "suspend" }
  | { readonly type: "resume" }
  | { readonly type: "flush" }
  | { readonly type: "enqueue-all"; readonly scope: "dbs" | "views" }
  | { readonly type: "state-restored"; readonly snapshot: SmooshSnapshot };

/** Effects: what the core asks the shell to do. The shell answers with events. */
export type SmooshEffect =
  | {
      readonly type: "fetch-info";
      readonly requestId: number;
      readonly object: CompactionObject;
      readonly purpose: FetchPurpose;
    }
  | {
      readonly type: "start-job";
      readonly jobId: number;
      readonly channel: string;
      readonly object: CompactionObject;
      /** true: a compaction of this object is already running on the store; watch it, do not start another. */
      readonly adopt: boolean;
    }
  | { readonly type: "suspend-job"; readonly jobId: number }
  | { readonly type: "resume-job"; readonly jobId: number }
  | { readonly type: "cancel-job"; readonly jobId: number }
  | { readonly type: "list-dbs"; readonly purpose: ListPurpose }
  | { readonly type: "list-design-docs"; readonly db: DbName; readonly purpose: ListPurpose }
  /**
   * Wake the core with a `tick` event at about this time (it may come a little
   * early or late). Only the latest request counts; once a tick is delivered
   * the shell holds no timer until asked again.
   */
  | { readonly type: "schedule-tick"; readonly atMs: number }
  | { readonly type: "persist"; readonly snapshot: SmooshSnapshot }
  | {
      readonly type: "log";
      readonly level: LogLevel;
      readonly msg: string;
      readonly fields: Readonly<Record<string, unknown>>;
    };

/** CouchDB 3.4's `GET /_smoosh/status` shape, per channel. */
export interface ChannelStatus {
  readonly active: number;
  readonly starting: number;
  readonly waiting: { readonly size: number; readonly min: number; readonly max: number };
}

export interface SmooshStatus {
  readonly channels: Readonly<Record<string, ChannelStatus>>;
}

/** Counters the core keeps; the shell exports them (logs, metrics endpoint). */
export interface SmooshMetrics {
  readonly enqueued: number;
  readonly started: number;
  readonly adopted: number;
  readonly finished: number;
  readonly failed: number;
  readonly retried: number;
  readonly gaveUp: number;
  readonly skippedAtStart: number;
  readonly bytesReclaimed: number;
  readonly droppedAtCapacity: number;
}
