/**
 * One update pass of a geo index: the db's changes since the index's seq,
 * read in pages with their documents (`include_docs`: the same code for the
 * memory store and for CouchDB, which has no geo of its own), each page run
 * through the index function in the sandbox in one call, the next pages
 * already in the sandbox while this one is applied. The pass reads until
 * the feed has nothing more (so it covers the db's seq of when it started).
 *
 * Per document: design docs are not indexed; a deletion, or a function that
 * calls `st_index` zero times, takes it out; a function that throws, or an
 * invalid geometry, skips it (out of the index, logged). A function stopped
 * by the sandbox's time or memory limits on a few documents of one pass no
 * longer runs: the index stays at the last whole page and the pass fails
 * (not worth retrying) so one runaway function cannot hold the sandbox.
 */
import { left, right, type Either } from "fp-ts/lib/Either.js";
import { seqNumber } from "../../adapters/couchdb-http/seq.js";
import type { CompiledSandbox, SandboxCache } from "../../adapters/memory/views/sandbox-cache.js";
import type { DocOutcome, FunctionOutcome } from "../../ports/sandbox.js";
import type { ChangeRow, DocumentStore, StoredDoc } from "../../ports/store.js";
import type { LogRecord } from "./index-file.js";
import type { GeoIndexState } from "./index-state.js";
import type { GeoPassLog } from "./pass-log.js";
import type { GeoIndexStorage } from "./storage.js";

/** Documents per changes page and per sandbox call: a call has a fixed cost. */
export const PAGE_DOCS = 1000;
/** Pages read ahead: the sandbox has work queued while this thread applies one. */
const PAGES_IN_FLIGHT = 3;
/** Time or memory stops of the function in one pass before it is stopped for good. */
const LIMIT_STOPS_BEFORE_STOPPING = 3;

/** A geo index whose function no longer runs, or whose db went away: retrying soon would not help. */
export class GeoIndexStoppedError extends Error {
  readonly transient = false;
  constructor(message: string) {
    super(message);
    this.name = "GeoIndexStoppedError";
  }
}

export interface PassCounters {
  /** Documents read from changes feeds. */
  docsRead: number;
  /** Documents given to the sandbox. */
  docsRun: number;
  passes: number;
}

export interface PassDeps {
  readonly store: Pick<DocumentStore, "changes" | "getDoc">;
  readonly sandboxes: SandboxCache;
  readonly storage: GeoIndexStorage;
  readonly log: GeoPassLog;
  readonly counters: PassCounters;
  readonly pageDocs: number;
  /** After each page is applied: the seq reached, and whether the index's data changed. */
  readonly onPage: (seqNumber: number, changed: boolean) => void;
}

interface Page {
  readonly rows: readonly ChangeRow[];
  readonly lastSeq: string;
  readonly full: boolean;
  /** The docs run in the sandbox (live, not design docs), by id. */
  readonly docs: ReadonlyMap<string, StoredDoc>;
  readonly outcomes: Promise<readonly DocOutcome[]>;
}

const isDesignDocId = (id: string): boolean => id.startsWith("_design/");

const isIndexed = (row: ChangeRow): boolean => row.deleted !== true && !isDesignDocId(row.id) && row.doc?._deleted !== true;

const stopsIn = (outcomes: readonly DocOutcome[]): number =>
  outcomes.filter((o) => { const r = o.results[0]; return r !== undefined && !r.ok && (r.kind === "timeout" || r.kind === "memory"); }).length;

class Pass {
  private sandbox: CompiledSandbox | undefined;
  private limitStops = 0;

  constructor(
    private readonly state: GeoIndexState,
    private readonly deps: PassDeps,
  ) {}

  async run(): Promise<number> {
    const { state, deps } = this;
    if (state.stopped !== undefined) throw new GeoIndexStoppedError(`st_index function of ${state.signature} stopped: ${state.stopped}`);
    deps.counters.passes++;
    const firstBuild = deps.storage.durable && !state.hasFile;
    const inFlight: Page[] = [];
    let since = state.position.seq;
    let exhausted = false;
    const feed = async (): Promise<void> => {
      while (!exhausted && inFlight.length < PAGES_IN_FLIGHT) {
        const page = await this.read(since);
        inFlight.push(page);
        since = page.lastSeq;
        exhausted = !page.full;
      }
    };
    try {
      await feed();
      for (let page = inFlight.shift(); page !== undefined; page = inFlight.shift()) {
        await feed();
        await this.apply(page, await page.outcomes, firstBuild);
      }
      if (firstBuild && !state.dropped) await deps.storage.saveSnapshot(state);
      return state.position.seqNumber;
    } finally {
      for (const page of inFlight) page.outcomes.catch(() => undefined);
      if (this.sandbox !== undefined) deps.sandboxes.release(state.signature);
      deps.log.finish();
    }
  }

  private async read(since: string): Promise<Page> {
    const { results: rows, lastSeq } = await this.deps.store.changes(this.state.db, { since, limit: this.deps.pageDocs, includeDocs: true });
    this.deps.counters.docsRead += rows.length;
    const docs = new Map<string, StoredDoc>();
    for (const row of rows.filter(isIndexed)) {
      // A store that does not send docs with changes: read each (a deleted one is left out).
      const doc = row.doc ?? (await this.deps.store.getDoc(this.state.db, row.id));
      if (doc !== undefined && doc._deleted !== true) docs.set(row.id, doc);
    }
    const full = rows.length >= this.deps.pageDocs;
    if (docs.size === 0) return { rows, lastSeq, full, docs, outcomes: Promise.resolve([]) };
    const sandbox = await this.compiled();
    this.deps.counters.docsRun += docs.size;
    const outcomes = sandbox.sandbox.run([...docs.values()] as Record<string, unknown>[]);
    outcomes.catch(() => undefined);
    return { rows, lastSeq, full, docs, outcomes };
  }

  private async compiled(): Promise<CompiledSandbox> {
    if (this.sandbox !== undefined) return this.sandbox;
    const definition = this.state.definition;
    if (definition === undefined) throw new GeoIndexStoppedError(`geo index ${this.state.signature} has no definition (no design doc declares it)`);
    this.sandbox = await this.deps.sandboxes.acquire(this.state.signature, [{ name: "st_index", kind: "st_index", source: definition.index }]);
    const error = this.sandbox.errors.get(0);
    if (error !== undefined) this.stop(`compilation_error: ${error}`);
    return this.sandbox;
  }

  private stop(reason: string): never {
    this.state.stopped = reason;
    this.deps.log.functionStopped(reason);
    throw new GeoIndexStoppedError(`st_index function of ${this.state.signature} stopped: ${reason}`);
  }

  /** Applies a whole page or nothing of it (a stop is decided before any change). */
  private async apply(page: Page, outcomes: readonly DocOutcome[], firstBuild: boolean): Promise<void> {
    const { state, deps } = this;
    if (state.dropped) throw new GeoIndexStoppedError(`geo index ${state.signature} of ${state.db} was dropped during its update`);
    const stops = stopsIn(outcomes);
    if (this.limitStops + stops >= LIMIT_STOPS_BEFORE_STOPPING) this.stop(`stopped by the sandbox's limits on ${this.limitStops + stops} documents`);
    this.limitStops += stops;
    const byId = new Map<string, DocOutcome>();
    [...page.docs.keys()].forEach((id, i) => byId.set(id, outcomes[i]!));
    const records: LogRecord[] = [];
    for (const row of page.rows) {
      if (isDesignDocId(row.id)) continue;
      const doc = page.docs.get(row.id);
      const record = doc === undefined ? this.removed(row.id) : this.indexed(row.id, doc._rev, byId.get(row.id));
      if (record !== undefined) records.push(record);
    }
    state.position = { seq: page.lastSeq, seqNumber: seqNumber(page.lastSeq) ?? state.position.seqNumber };
    if (!firstBuild && records.length > 0) await deps.storage.append(state, records);
    deps.onPage(state.position.seqNumber, records.length > 0);
  }

  private removed(docId: string): LogRecord | undefined {
    return this.state.index.remove(docId) ? { d: docId } : undefined;
  }

  private indexed(docId: string, rev: string, outcome: DocOutcome | undefined): LogRecord | undefined {
    if (outcome !== undefined && outcome.logs.length > 0) this.deps.log.userLog(docId, outcome.logs);
    const geometries = geometriesOf(outcome?.results[0]);
    if (geometries._tag === "Left") {
      this.deps.log.docSkipped(docId, geometries.left.kind, geometries.left.reason);
      return this.removed(docId);
    }
    if (geometries.right.length === 0) return this.removed(docId);
    const had = this.state.index.has(docId);
    const upserted = this.state.index.upsert(docId, rev, geometries.right);
    if (upserted._tag === "Left") {
      this.deps.log.docSkipped(docId, "geometry", upserted.left);
      return had ? { d: docId } : undefined;
    }
    return { u: docId, r: rev, g: geometries.right };
  }
}

const geometriesOf = (result: FunctionOutcome | undefined): Either<{ readonly kind: string; readonly reason: string }, readonly unknown[]> => {
  if (result === undefined) return left({ kind: "exception", reason: "the sandbox gave no result for the document" });
  if (!result.ok) return left({ kind: result.kind, reason: result.error });
  return "geometries" in result ? right(result.geometries) : left({ kind: "exception", reason: "the function emitted rows instead of calling st_index" });
};

/** Brings the index up to the end of the db's changes feed; resolves with the seq reached. */
export const runGeoPass = (state: GeoIndexState, deps: PassDeps): Promise<number> => new Pass(state, deps).run();
