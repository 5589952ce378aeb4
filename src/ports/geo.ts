/**
 * The geo ports (hastings' `st_indexes`): what upholster's HTTP API asks of
 * the geo indexes (`GeoService`), and what the compaction daemon sees of
 * their files (`GeoIndexFiles`).
 *
 * upholster keeps geo indexes itself on every store (CouchDB 3 has none):
 * one index per signature (a digest of the definition), shared by the
 * design docs that define it identically, built from the db's changes
 * with the index functions run in the sandbox, persisted as a snapshot
 * plus the seq it reflects. Implemented in src/runtime/geo.
 */
import type { DocLookup, GeoPage, PreparedGeoQuery } from "../core/geo/index.js";
import type { DbName, DesignDocId, JobHandle } from "./store.js";

/** One `st_indexes` member of one design doc: `/{db}/_design/{ddoc}/_geo/{index}`. */
export interface GeoIndexRef {
  readonly db: DbName;
  /** With its `_design/` prefix. */
  readonly ddoc: DesignDocId;
  readonly index: string;
}

/** Why a geo call failed, as hastings says it (`error`, `reason`, HTTP status). Never a 5xx for bad input. */
export class GeoError extends Error {
  constructor(
    readonly status: 400 | 404 | 500 | 503,
    readonly error: string,
    readonly reason: string,
  ) {
    super(`${error}: ${reason}`);
    this.name = "GeoError";
  }
}

export interface GeoSearchAnswer {
  readonly page: GeoPage;
  /** The page's docs when the query asked for `include_docs` (null: deleted since indexed). */
  readonly docs: DocLookup;
  /** The seq the index answered at. */
  readonly indexSeq: number;
}

/** `GET /{db}/_design/{ddoc}/_geo_info/{index}`: hastings' body, plus upholster's own members after it. */
export interface GeoIndexInfoBody {
  /** `_design/{ddoc}/{index}` */
  readonly name: string;
  readonly geo_index: {
    readonly doc_count: number;
    /** Bytes of the index file, garbage included (`sizes.file`). */
    readonly disk_size: number;
    /** Bytes of live data (`sizes.active`). */
    readonly data_size: number;
    /** upholster: the signature, the seq the index reflects, and whether an update runs. */
    readonly signature: string;
    readonly update_seq: number;
    readonly updater_running: boolean;
    readonly compact_running: boolean;
  };
}

export interface GeoService {
  /**
   * Run a prepared query. Unless `prepared.query.stale` is set, waits until
   * the index reaches the db's seq at the time of the call. Rejects with
   * GeoError: 404 `not_found` for a missing db, design doc or index
   * ("Geospatial index 'X' not found").
   */
  search(ref: GeoIndexRef, prepared: PreparedGeoQuery): Promise<GeoSearchAnswer>;
  info(ref: GeoIndexRef): Promise<GeoIndexInfoBody>;
  /** `POST /{db}/_geo_cleanup`: remove the indexes whose signature no design doc of `db` uses. */
  cleanup(db: DbName): Promise<void>;
}

/** One geo index file, as the compaction daemon sees it. */
export interface GeoIndexFile {
  readonly db: DbName;
  readonly signature: string;
  /** The design docs that use it (sorted), for logs and status. */
  readonly ddocs: readonly DesignDocId[];
  /** Bytes of the file, garbage included. */
  readonly fileBytes: number;
  /** Bytes of live data: about what `fileBytes` falls to when compacted. */
  readonly activeBytes: number;
  readonly updateSeq: number;
  readonly compactionRunning: boolean;
}

/**
 * The geo index files, for the compaction daemon: they grow as documents
 * change (an append-only log after a snapshot) and compaction rewrites
 * them as one snapshot.
 */
export interface GeoIndexFiles {
  /** Every geo index file of `db` (in use or stale). */
  files(db: DbName): Promise<GeoIndexFile[]>;
  /** `undefined` when the index does not exist (any more). */
  file(db: DbName, signature: string): Promise<GeoIndexFile | undefined>;
  /** Rewrite the file as a snapshot of its live data. */
  compact(db: DbName, signature: string): Promise<JobHandle>;
  /** Called after an update appended to a file; returns the unsubscribe. */
  onGrowth(listener: (db: DbName, signature: string) => void): () => void;
}
