/**
 * The index backend port: one kind of secondary index (views, dreyfus
 * search, nouveau, hastings geo, an embedder's own) that the background
 * indexer keeps up to date. Backends register with the indexer
 * (`upholster.indexing.registerBackend(backend)`), as CouchDB 4's indexing
 * applications register with `fabric2_index:register/1`.
 *
 * Why not the RFC's `build_indices(Db, DDocs)` as is: the RFC hands a whole
 * db to each backend, so the builder cannot count, order or limit the work
 * inside it ("no concept of priority", its own words), and ken's channel
 * limits (`batch_channels`, `incremental_channels`) cannot apply. Here the
 * backend answers two questions instead:
 *
 * - `indexesOf(db, designDocs)`: which indexes these design docs define
 *   (pure: no I/O), each with a stable key;
 * - `build(db, index, ...)`: bring that one index up to date;
 *
 * so jobs are per index, as in ken, and the core decides which index goes
 * when. `progress` reports where an index stands (ken reads it for the
 * incremental channels, status shows the lag), and `cleanup` is the RFC's
 * `cleanup_indices(Db, AllDDocs)` unchanged.
 *
 * Every method rejects (never throws synchronously) on failure. An error
 * with a boolean `transient` member says whether it is worth retrying soon
 * (a timeout, a node down, maintenance mode: yes; a broken design doc: no);
 * without it the shell guesses from the error's kind (HTTP status, ...).
 */
import type { DbName, IndexProgress, IndexSpec, IndexType, ListedDesignDoc } from "../core/indexing/index.js";
import type { IndexDiscovery } from "../core/indexing/index.js";

export type { DbName, IndexProgress, IndexSpec, IndexType, ListedDesignDoc, IndexDiscovery };

export interface BuildOptions {
  /** Bring the index at least this far (the db's seq when the build was decided). */
  readonly targetSeq: number;
  /** Aborted when the build is no longer wanted (timeout, db deleted, shutdown): stop waiting, best effort. */
  readonly signal: AbortSignal;
  /** Where the index has got to, as the build goes: a build that reports progress is not timed out. */
  readonly onProgress?: ((indexSeq: number) => void) | undefined;
}

export interface BuildResult {
  /** The seq the index reached. */
  readonly indexSeq: number;
  /** The db's seq the backend saw as it finished, when it knows it: beyond `indexSeq`, the db moved on meanwhile. */
  readonly dbSeq?: number | undefined;
}

export interface IndexBackend {
  readonly type: IndexType;
  /** The design doc member its indexes are declared in; also their key in `"autoupdate": {...}`. */
  readonly field: string;
  /**
   * Called once before first use (and again after a failure): learn what the
   * server can do. A backend the server cannot serve says so in one log line
   * and then finds no indexes (`indexesOf` returns none), never an error per db.
   */
  start?(): Promise<void>;
  /** Pure: the indexes these design docs define, and what could not be used (with reasons). */
  indexesOf(db: DbName, designDocs: readonly ListedDesignDoc[]): IndexDiscovery;
  /** Bring `index` up to date (or trigger its update and follow it). Never two at once for one index: the indexer sees to it. */
  build(db: DbName, index: IndexSpec, options: BuildOptions): Promise<BuildResult>;
  /** Where `index` stands; undefined when the backend cannot tell (the index is then built anyway). */
  progress(db: DbName, index: IndexSpec): Promise<IndexProgress | undefined>;
  /** Remove index data that no design doc in `designDocs` (all of the db's) uses any more. */
  cleanup(db: DbName, designDocs: readonly ListedDesignDoc[]): Promise<void>;
  /** Anything worth showing in status (availability, request counts). */
  status?(): unknown;
}
