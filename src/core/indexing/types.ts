/**
 * The indexing core's vocabulary (CouchDB's ken and the CouchDB 4 index
 * builder, fabric2_index): what it is told (events), what it asks the shell
 * to do (effects), and the facts it reasons about (indexes, their progress).
 *
 * The contract between the pure core (`src/core/indexing`) and the shell
 * (`src/runtime/indexing`). Everything here is plain data: serialisable,
 * comparable, replayable.
 */
import type { IndexingConfig } from "./config.js";
import type { DeployRecord } from "./deploy.js";

export type DbName = string;
/** A design document id with its prefix: `_design/foo`. */
export type DesignDocId = string;
/** A backend's name: `views`, `search` (dreyfus), `nouveau`, `geo` (hastings), or an embedder's own. */
export type IndexType = string;

/**
 * One index as its backend describes it (pure data, from `indexesOf`). Job
 * granularity is the index, not the db, so ken's channel limits and
 * priorities apply per index.
 */
export interface IndexSpec {
  readonly type: IndexType;
  /**
   * Unique among the backend's indexes of one db, and stable: the same
   * definition gives the same key (views: a digest of what defines the rows,
   * so design docs with identical views share one index, as in CouchDB).
   */
  readonly key: string;
  /** The design docs defining it, sorted; the first one is used to build it. */
  readonly ddocs: readonly DesignDocId[];
  /** For logs and status: `_design/app` (a view group), `_design/app/by_text` (a search index). */
  readonly name: string;
  /**
   * The design doc member holding this kind of index, which is also its key
   * in `"autoupdate": {...}`: `views`, `indexes` (search), `nouveau`,
   * `st_indexes` (geo). ken's switch per index type.
   */
  readonly field: string;
  /**
   * What the backend needs to address the index in its design doc: for
   * views one view of the group (any view builds the whole group), for
   * named indexes their name.
   */
  readonly entry: string;
}

/** Where an index stands, as its backend reports it. */
export interface IndexProgress {
  /** The db seq the index has reached (numeric; CouchDB: the sum over shards, as `_info` reports it). */
  readonly indexSeq: number;
  /** The store is updating it right now (a query, another builder, CouchDB's own ken). */
  readonly updating: boolean;
  /** Requests waiting for this index (CouchDB's `waiting_clients`): someone is querying it. */
  readonly waitingClients?: number | undefined;
}

/** One design document as listed (bodies are untrusted: garbage is skipped with a reason). */
export interface ListedDesignDoc {
  readonly id: DesignDocId;
  readonly body: unknown;
}

/** An index found in a db, with its progress when the backend could tell. */
export interface InspectedIndex {
  readonly spec: IndexSpec;
  readonly progress?: IndexProgress | undefined;
  /** Why progress is unknown (the backend failed to tell); the index is still considered. */
  readonly progressError?: string | undefined;
}

/** A design doc (or one index in it) that a backend could not use, and why (logged once per inspection). */
export interface IndexProblem {
  readonly ddoc: DesignDocId;
  readonly reason: string;
}

export type LogLevel = "debug" | "info" | "warn" | "error";

/** Which of ken's channels admitted a job. */
export type Channel = "batch" | "incremental";

/** An index's state in status. */
export type IndexState = "fresh" | "behind" | "waiting" | "building" | "retrying" | "failed";

/** Events: everything the core learns, always with the time it is learnt passed beside it. */
export type IndexingEvent =
  /** A db was written: pending from its first update, looked at once that is `index_updater_delay_msec` old. */
  | { readonly type: "db-updated"; readonly db: DbName }
  | { readonly type: "db-deleted"; readonly db: DbName }
  /** A design doc was written: the db is looked at at once (no delay), and its stale index files cleaned after. */
  | { readonly type: "ddoc-updated"; readonly db: DbName; readonly ddoc: DesignDocId }
  /** Operator or library: look at this db now, past the delay. */
  | { readonly type: "enqueue"; readonly db: DbName }
  /** Someone queried a view or index of this design doc (it goes first while the query is recent). */
  | { readonly type: "index-queried"; readonly db: DbName; readonly ddoc: DesignDocId }
  /** Operator hint: this design doc's indexes (or all of the db's) go first until they are fresh. */
  | { readonly type: "prioritize"; readonly db: DbName; readonly ddoc?: DesignDocId | undefined }
  | {
      readonly type: "db-inspected";
      readonly requestId: number;
      readonly db: DbName;
      readonly dbSeq: number;
      readonly designDocs: readonly ListedDesignDoc[];
      readonly indexes: readonly InspectedIndex[];
      readonly problems: readonly IndexProblem[];
    }
  | { readonly type: "db-missing"; readonly requestId: number; readonly db: DbName }
  /** `transient`: a timeout, maintenance mode, a node down, the store unavailable: retried forever (CouchDB issue 5392). */
  | { readonly type: "inspect-failed"; readonly requestId: number; readonly db: DbName; readonly error: string; readonly transient: boolean }
  /** `dbSeq`: the db's seq the backend saw as it finished, when it knows it (the db may have moved on meanwhile). */
  | { readonly type: "build-finished"; readonly jobId: number; readonly indexSeq: number; readonly dbSeq?: number | undefined }
  | { readonly type: "build-failed"; readonly jobId: number; readonly error: string; readonly transient: boolean }
  | { readonly type: "cleanup-done"; readonly requestId: number; readonly db: DbName; readonly error?: string | undefined }
  | { readonly type: "tick" }
  | { readonly type: "config-changed"; readonly config: IndexingConfig }
  | DeployEvent;

/** The staged design doc deploy (see deploy.ts). */
export type DeployEvent =
  /** Stage `body` as the next version of `ddoc`, build its indexes, swap it in when fresh. */
  | { readonly type: "deploy-requested"; readonly db: DbName; readonly ddoc: DesignDocId; readonly body: Readonly<Record<string, unknown>> }
  | { readonly type: "deploy-cancel"; readonly db: DbName; readonly ddoc: DesignDocId }
  /**
   * The stage is written; `liveRev`: the live design doc's rev then (null:
   * there is none yet); `stagedSeq`: the db's seq once it was written (its
   * indexes must reach at least that before the swap).
   */
  | { readonly type: "deploy-staged"; readonly deployId: string; readonly liveRev: string | null; readonly stagedSeq: number }
  /** Where the stage's indexes stand: the largest lag, the lowest index seq (undefined: it has none), how many. */
  | { readonly type: "deploy-checked"; readonly deployId: string; readonly lag: number; readonly minIndexSeq: number | undefined; readonly indexes: number }
  | { readonly type: "deploy-swapped"; readonly deployId: string }
  | { readonly type: "deploy-stage-removed"; readonly deployId: string }
  /** `conflict`: the live design doc changed under the deploy (or the stage id is someone else's): not retried. */
  | {
      readonly type: "deploy-step-failed";
      readonly deployId: string;
      readonly error: string;
      readonly transient: boolean;
      readonly conflict?: boolean | undefined;
    }
  | { readonly type: "deploys-restored"; readonly deploys: readonly DeployRecord[] };

/** Effects: what the core asks the shell to do. The shell answers with events. */
export type IndexingEffect =
  /**
   * List the db's design docs (bodies), read its seq, ask every backend
   * which indexes they define and where each stands. Answered by
   * `db-inspected`, `db-missing` or `inspect-failed`.
   */
  | { readonly type: "inspect-db"; readonly requestId: number; readonly db: DbName }
  /** Bring one index up to `targetSeq` at least (the backend may go further). Answered by `build-finished` / `build-failed`. */
  | {
      readonly type: "build-index";
      readonly jobId: number;
      readonly db: DbName;
      readonly index: IndexSpec;
      readonly targetSeq: number;
      readonly channel: Channel;
    }
  /**
   * The db was deleted: abort this build. Its channel stays taken until its
   * answer comes (the backend let go), so never more builds run than the channels allow.
   */
  | { readonly type: "cancel-build"; readonly jobId: number }
  /** Remove index files no design doc uses any more: every backend's `cleanup(db, designDocs)`. */
  | { readonly type: "cleanup-indexes"; readonly requestId: number; readonly db: DbName; readonly designDocs: readonly ListedDesignDoc[] }
  /**
   * Wake the core with a `tick` at about this time (it may come early or
   * late). Only the latest request counts; once a tick is delivered the
   * shell holds no timer until asked again.
   */
  | { readonly type: "schedule-tick"; readonly atMs: number }
  | DeployEffect
  /** Save the deploys (a restart resumes them). */
  | { readonly type: "persist"; readonly deploys: readonly DeployRecord[] }
  | { readonly type: "log"; readonly level: LogLevel; readonly msg: string; readonly fields: Readonly<Record<string, unknown>> };

export type DeployEffect =
  /** Write `body` at `stageId` (idempotent: a stage already there from this deploy is kept) and read the live rev. */
  | {
      readonly type: "deploy-stage";
      readonly deployId: string;
      readonly db: DbName;
      readonly ddoc: DesignDocId;
      readonly stageId: DesignDocId;
      readonly body: Readonly<Record<string, unknown>>;
    }
  /** How far the stage's indexes are behind the db (the largest lag), and how many it has. */
  | { readonly type: "deploy-check"; readonly deployId: string; readonly db: DbName; readonly stageId: DesignDocId }
  /** Write `body` over the live design doc if it is still at `liveRev` (null: absent). */
  | {
      readonly type: "deploy-swap";
      readonly deployId: string;
      readonly db: DbName;
      readonly ddoc: DesignDocId;
      readonly body: Readonly<Record<string, unknown>>;
      readonly liveRev: string | null;
    }
  | { readonly type: "deploy-remove-stage"; readonly deployId: string; readonly db: DbName; readonly stageId: DesignDocId };

/** Counters the core keeps (exported as metrics). */
export interface IndexingMetrics {
  readonly dbsQueued: number;
  readonly inspections: number;
  readonly inspectFailures: number;
  readonly buildsStarted: number;
  readonly buildsFinished: number;
  readonly buildsFailed: number;
  /** Refusals of ken's start rule (no free channel, backlog too big for an incremental channel, too soon). */
  readonly refusals: number;
  /** Dbs put back after a refusal (the seed's 60 s resubmit) or a failure. */
  readonly resubmits: number;
  /** Builds started again at once because the db moved on while they ran (catch-up). */
  readonly catchUps: number;
  readonly cleanups: number;
  /** Dbs or indexes not kept because a bound was reached (logged each time). */
  readonly droppedAtCapacity: number;
  readonly deploysDone: number;
  readonly deploysFailed: number;
}
