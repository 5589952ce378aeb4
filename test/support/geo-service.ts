/**
 * A GeoService for tests over the real engine (GeoIndex and the pure core),
 * without the runtime: dbs hold docs; each index has a TypeScript "index
 * function" (what its JS function would pass to `st_index`) run over every
 * doc as it is written. Answers with hastings' GeoErrors for a missing db,
 * design doc or index; `failNextWith` makes the next call throw, to see how
 * the HTTP layer passes the service's own errors on.
 */
import { createHash } from "node:crypto";
import { GeoIndex } from "../../src/adapters/geo/index.js";
import type { DocLookup, JsonObject, PreparedGeoQuery } from "../../src/core/geo/index.js";
import { GeoError, type GeoIndexInfoBody, type GeoIndexRef, type GeoSearchAnswer, type GeoService } from "../../src/ports/geo.js";

/** The geometries a doc is indexed with (none: not in the index). */
export type TestIndexFunction = (doc: JsonObject) => readonly unknown[];

export interface TestDoc extends JsonObject {
  readonly _id: string;
  readonly _rev: string;
}

interface TestIndex {
  readonly engine: GeoIndex;
  readonly fn: TestIndexFunction;
  readonly signature: string;
}

interface TestDb {
  readonly docs: Map<string, TestDoc>;
  /** `_design/ddoc` -> index name -> index. */
  readonly ddocs: Map<string, Map<string, TestIndex>>;
  seq: number;
}

/** The usual test index function: `if (doc.geometry) st_index(doc.geometry)`. */
export const geometryMember: TestIndexFunction = (doc) => (doc["geometry"] === undefined ? [] : [doc["geometry"]]);

export class TestGeoService implements GeoService {
  private readonly dbs = new Map<string, TestDb>();
  private nextFailure: Error | undefined;
  /** What the last search was asked, for checks of what reached the service. */
  lastSearch: { ref: GeoIndexRef; prepared: PreparedGeoQuery } | undefined;
  cleanups: string[] = [];

  createDb(db: string): void {
    this.dbs.set(db, { docs: new Map(), ddocs: new Map(), seq: 0 });
  }

  defineIndex(db: string, ddoc: string, index: string, fn: TestIndexFunction = geometryMember): void {
    const state = this.db(db);
    const engine = new GeoIndex();
    for (const doc of state.docs.values()) engine.upsert(doc._id, doc._rev, fn(doc));
    const indexes = state.ddocs.get(ddoc) ?? new Map<string, TestIndex>();
    indexes.set(index, { engine, fn, signature: createHash("sha256").update(`${ddoc}/${index}`).digest("hex").slice(0, 32) });
    state.ddocs.set(ddoc, indexes);
  }

  putDoc(db: string, doc: TestDoc): void {
    const state = this.db(db);
    state.docs.set(doc._id, doc);
    state.seq += 1;
    for (const index of this.indexesOf(state)) index.engine.upsert(doc._id, doc._rev, index.fn(doc));
  }

  deleteDoc(db: string, id: string): void {
    const state = this.db(db);
    state.docs.delete(id);
    state.seq += 1;
    for (const index of this.indexesOf(state)) index.engine.remove(id);
  }

  failNextWith(error: Error): void {
    this.nextFailure = error;
  }

  async search(ref: GeoIndexRef, prepared: PreparedGeoQuery): Promise<GeoSearchAnswer> {
    this.throwInjected();
    this.lastSearch = { ref, prepared };
    const state = this.db(ref.db);
    const page = this.index(ref).engine.search(prepared);
    const docs: DocLookup = (id) => state.docs.get(id) ?? null;
    return { page, docs, indexSeq: state.seq };
  }

  async info(ref: GeoIndexRef): Promise<GeoIndexInfoBody> {
    this.throwInjected();
    const { engine, signature } = this.index(ref);
    const sizes = engine.sizes();
    return {
      name: `${ref.ddoc}/${ref.index}`,
      geo_index: {
        doc_count: engine.docCount,
        disk_size: sizes.fileBytes,
        data_size: sizes.dataBytes,
        signature,
        update_seq: this.db(ref.db).seq,
        updater_running: false,
        compact_running: false,
      },
    };
  }

  async cleanup(db: string): Promise<void> {
    this.throwInjected();
    this.db(db);
    this.cleanups.push(db);
  }

  /** The engine behind an index, for tests that compare with it directly. */
  engineOf(ref: GeoIndexRef): GeoIndex {
    return this.index(ref).engine;
  }

  private db(name: string): TestDb {
    const state = this.dbs.get(name);
    if (state === undefined) throw new GeoError(404, "not_found", "Database does not exist.");
    return state;
  }

  private index(ref: GeoIndexRef): TestIndex {
    const indexes = this.db(ref.db).ddocs.get(ref.ddoc);
    // CouchDB opens the design doc before hastings looks for the index in it.
    if (indexes === undefined) throw new GeoError(404, "not_found", "missing");
    const index = indexes.get(ref.index);
    if (index === undefined) throw new GeoError(404, "not_found", `Geospatial index '${ref.index}' not found`);
    return index;
  }

  private indexesOf(state: TestDb): TestIndex[] {
    return [...state.ddocs.values()].flatMap((indexes) => [...indexes.values()]);
  }

  private throwInjected(): void {
    const failure = this.nextFailure;
    this.nextFailure = undefined;
    if (failure !== undefined) throw failure;
  }
}
