/**
 * One geo index at runtime (one db, one signature): the spatial index, the
 * seq it reflects, its single-flight update, and its file's bookkeeping.
 * File writes go through one chain per index so an append never lands in
 * the middle of a compaction's rewrite.
 */
import { GeoIndex } from "../../adapters/geo/index.js";
import { SharedUpdate } from "../../adapters/memory/views/shared-update.js";
import type { StIndexDefinition } from "../../core/geo/index.js";
import type { DbName, DesignDocId } from "../../ports/store.js";
import type { IndexPosition } from "./index-file.js";

export const START_POSITION: IndexPosition = { seq: "0", seqNumber: 0 };

export class GeoIndexState {
  /** Undefined until a design doc declaring it is seen (a file opened for compaction only). */
  definition: StIndexDefinition | undefined;
  ddocs: readonly DesignDocId[] = [];
  index: GeoIndex;
  position: IndexPosition;
  readonly update = new SharedUpdate();
  /** Why its function no longer runs (compile error, stopped by limits); cleared by nothing: a new definition is a new signature. */
  stopped: string | undefined;
  /** Its db was deleted or the index cleaned up: passes in flight stop. */
  dropped = false;
  compacting = false;
  /** The file exists with a snapshot (directory mode): later passes append to it. */
  hasFile = false;
  /** Bytes of the file on disk (directory mode). */
  diskBytes = 0;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    readonly db: DbName,
    readonly signature: string,
    index: GeoIndex,
    position: IndexPosition,
  ) {
    this.index = index;
    this.position = position;
  }

  /**
   * Attach the definition and the design docs that declare it (`replace`:
   * all of them, from a discovery; else one more, from a query). An empty
   * index opened before its definition was known is made again with its dimensions.
   */
  bind(definition: StIndexDefinition, ddocs: readonly DesignDocId[], replace: boolean): void {
    if (this.definition === undefined && this.position.seqNumber === 0 && this.index.docCount === 0) this.index = new GeoIndex({ dimensions: definition.dimensions });
    this.definition = definition;
    this.ddocs = [...new Set(replace ? ddocs : [...this.ddocs, ...ddocs])].sort();
  }

  /** Runs `write` after every write queued before it. */
  serialize<T>(write: () => Promise<T>): Promise<T> {
    const next = this.writes.then(write, write);
    this.writes = next.catch(() => undefined);
    return next;
  }
}
