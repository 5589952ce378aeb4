/**
 * The geo indexes of every db, one per (db, signature) as in hastings'
 * index manager: opened on first use (restored from its file when there is
 * one, else built from seq 0), updated by one shared pass at a time
 * (queries and the background indexer join it), compacted, cleaned up and
 * dropped with their db. Store-agnostic: it needs the DocumentStore port
 * only, so it keeps geo for the memory store and for CouchDB alike.
 *
 * A failure in one index (a bad function, the sandbox stopping it, a store
 * error) rejects that index's update only; the others go on.
 */
import { GeoSnapshotError } from "../../adapters/geo/index.js";
import type { SandboxCache } from "../../adapters/memory/views/sandbox-cache.js";
import type { StIndexDefinition } from "../../core/geo/index.js";
import { seqNumber } from "../../adapters/couchdb-http/seq.js";
import { errorText } from "../../core/shared/error-text.js";
import type { Logger } from "../../ports/shell.js";
import type { DbName, DesignDocId, DocumentStore } from "../../ports/store.js";
import { GeoIndexState, START_POSITION } from "./index-state.js";
import { GeoPassLog } from "./pass-log.js";
import { emptyIndex, type GeoIndexStorage } from "./storage.js";
import { PAGE_DOCS, runGeoPass, type PassCounters } from "./update-pass.js";

export interface GeoManagerOptions {
  readonly store: Pick<DocumentStore, "changes" | "getDoc" | "currentSeq">;
  readonly sandboxes: SandboxCache;
  readonly storage: GeoIndexStorage;
  readonly logger: Logger;
  /** Documents per changes page and sandbox call (default 1000). */
  readonly pageDocs?: number | undefined;
}

export type GrowthListener = (db: DbName, signature: string) => void;

export interface GeoCounters extends PassCounters {
  /** Indexes restored from their file. */
  restored: number;
  /** Files found missing-or-corrupt that were rebuilt (corrupt ones only; missing is a first build). */
  corruptFiles: number;
}

export class GeoIndexManager {
  readonly counters: GeoCounters = { docsRead: 0, docsRun: 0, passes: 0, restored: 0, corruptFiles: 0 };
  private readonly dbs = new Map<DbName, Map<string, Promise<GeoIndexState>>>();
  private readonly growth = new Set<GrowthListener>();

  constructor(private readonly options: GeoManagerOptions) {}

  get storage(): GeoIndexStorage {
    return this.options.storage;
  }

  /** The index, opened (restored from its file) if need be. */
  open(db: DbName, signature: string, definition?: StIndexDefinition): Promise<GeoIndexState> {
    let byKey = this.dbs.get(db);
    if (byKey === undefined) this.dbs.set(db, (byKey = new Map()));
    let opening = byKey.get(signature);
    if (opening === undefined) {
      opening = this.load(db, signature, definition);
      byKey.set(signature, opening);
      opening.catch(() => {
        if (this.dbs.get(db)?.get(signature) === opening) this.dbs.get(db)?.delete(signature);
      });
    }
    return opening;
  }

  /** The index if it is open (or opening) now. */
  opened(db: DbName, signature: string): Promise<GeoIndexState> | undefined {
    return this.dbs.get(db)?.get(signature);
  }

  /** The signatures open for `db`. */
  openSignatures(db: DbName): string[] {
    return [...(this.dbs.get(db)?.keys() ?? [])];
  }

  /** Open and attach the definition declared by `ddocs` (`replace`: all of them). */
  async bind(db: DbName, signature: string, definition: StIndexDefinition, ddocs: readonly DesignDocId[], replace: boolean): Promise<GeoIndexState> {
    const state = await this.open(db, signature, definition);
    state.bind(definition, ddocs, replace);
    return state;
  }

  /**
   * Resolves once the index covers `targetSeq` (a numeric db seq): joins the
   * pass running when it covers it, else the one follow-up pass.
   */
  update(state: GeoIndexState, targetSeq: number, onProgress?: (seqNumber: number) => void): Promise<number> {
    if (state.position.seqNumber >= targetSeq && !state.update.isRunning) return Promise.resolve(state.position.seqNumber);
    const progress = onProgress ?? (() => undefined);
    return state.update.request(targetSeq, () => targetSeq, () => this.pass(state, progress));
  }

  onGrowth(listener: GrowthListener): () => void {
    this.growth.add(listener);
    return () => this.growth.delete(listener);
  }

  /** Forget the index and delete its file. */
  async drop(db: DbName, signature: string): Promise<void> {
    const opening = this.dbs.get(db)?.get(signature);
    this.dbs.get(db)?.delete(signature);
    const state = await opening?.catch(() => undefined);
    if (state !== undefined) state.dropped = true;
    await (state?.serialize(() => this.storage.remove(db, signature)) ?? this.storage.remove(db, signature));
  }

  /** The db was deleted: every index of it goes, files included. */
  async dropDb(db: DbName): Promise<void> {
    const byKey = this.dbs.get(db);
    this.dbs.delete(db);
    for (const opening of byKey?.values() ?? []) {
      const state = await opening.catch(() => undefined);
      if (state !== undefined) state.dropped = true;
    }
    await this.storage.removeDb(db);
  }

  private async pass(state: GeoIndexState, onProgress: (seqNumber: number) => void): Promise<number> {
    const log = new GeoPassLog(this.options.logger, { db: state.db, signature: state.signature, ddocs: state.ddocs });
    return runGeoPass(state, {
      store: this.options.store,
      sandboxes: this.options.sandboxes,
      storage: this.storage,
      log,
      counters: this.counters,
      pageDocs: this.options.pageDocs ?? PAGE_DOCS,
      onPage: (seqNumber, changed) => {
        onProgress(seqNumber);
        if (changed) this.notifyGrowth(state);
      },
    });
  }

  private notifyGrowth(state: GeoIndexState): void {
    for (const listener of this.growth) {
      try {
        listener(state.db, state.signature);
      } catch (error) {
        this.options.logger.warn({ db: state.db, signature: state.signature, err: errorText(error) }, "a geo growth listener failed");
      }
    }
  }

  private async load(db: DbName, signature: string, definition: StIndexDefinition | undefined): Promise<GeoIndexState> {
    const fresh = (): GeoIndexState => new GeoIndexState(db, signature, emptyIndex(definition?.dimensions), START_POSITION);
    let loaded;
    try {
      loaded = await this.storage.load(db, signature);
    } catch (error) {
      if (!(error instanceof GeoSnapshotError)) throw error;
      this.counters.corruptFiles++;
      this.options.logger.warn({ db, signature, reason: error.message }, "a geo index file is corrupt: the index is rebuilt from seq 0");
      return fresh();
    }
    if (loaded === undefined) return fresh();
    if (definition !== undefined && loaded.index.dimensions !== definition.dimensions) {
      this.counters.corruptFiles++;
      this.options.logger.warn({ db, signature, dimensions: loaded.index.dimensions }, "a geo index file has other dimensions than its definition: the index is rebuilt from seq 0");
      return fresh();
    }
    if (await this.dbWentBack(db, loaded.seqNumber)) return fresh();
    this.counters.restored++;
    const state = new GeoIndexState(db, signature, loaded.index, { seq: loaded.seq, seqNumber: loaded.seqNumber });
    state.hasFile = true;
    state.diskBytes = loaded.fileBytes;
    // A torn last batch is dropped; rewrite so later appends follow whole lines.
    if (loaded.tornTail) await this.storage.saveSnapshot(state);
    return state;
  }

  /**
   * The db's seq is behind the file's: the db was deleted and created again
   * while nobody watched (upholster was down), so the file indexes another
   * db's documents. Unknown (the store did not answer) counts as not behind.
   */
  private async dbWentBack(db: DbName, fileSeqNumber: number): Promise<boolean> {
    const current = await this.options.store.currentSeq(db).catch(() => undefined);
    const currentNumber = current === undefined ? undefined : seqNumber(current);
    if (currentNumber === undefined || currentNumber >= fileSeqNumber) return false;
    this.counters.corruptFiles++;
    this.options.logger.warn({ db, fileSeq: fileSeqNumber, dbSeq: current }, "a geo index file is ahead of its db (deleted and created again?): the index is rebuilt from seq 0");
    return true;
  }
}
