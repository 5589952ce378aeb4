/**
 * One update pass of a view index group: the documents changed since the
 * index's seq, read in pages from the db, mapped in the sandbox a page per
 * call (hundreds of docs: a call has a fixed cost), staged into the index
 * and committed every few thousand documents and at the end.
 *
 * The next page is already in the sandbox while this one is staged, so the
 * sandbox thread and this one work at the same time. Design docs are not
 * mapped; deleted docs lose their rows. A function that throws on a
 * document leaves that document out of its views (logged); one stopped by
 * the sandbox's time or memory limits too, and after a few such stops in
 * one pass it no longer runs at all (its views then answer with an error),
 * so one runaway function cannot hold the shared sandbox thread for long.
 */
import { SerializedDoc, type DocOutcome, type FunctionOutcome, type IndexFunctionSource } from "../../../ports/sandbox.js";
import { isDesignDocId } from "../names.js";
import { liveDocJson, type DocRecord, type MemoryDatabase } from "../database.js";
import type { GroupIndex, StoredRow } from "./group-index.js";
import { jsonSize } from "./json-size.js";
import type { PassLog } from "./pass-log.js";
import type { CompiledSandbox, SandboxCache } from "./sandbox-cache.js";

/** Documents per sandbox call. */
const PAGE_DOCS = 1000;
/** Pages in the sandbox at once: it has work queued while this thread stages and commits. */
const PAGES_IN_FLIGHT = 3;
/**
 * Documents per commit: an eighth of the index, within these bounds. A
 * commit copies the row arrays (so not too often: O(rows) each) and sorts
 * what it adds in one go, during which the event loop waits (so not too
 * much at once: ~20,000 docs is ~0.1 s of CPU).
 */
const COMMIT_MIN_DOCS = 5000;
const COMMIT_MAX_DOCS = 20_000;
/** Time or memory stops of one function in one pass before it is stopped for good. */
const LIMIT_STOPS_BEFORE_STOPPING = 3;

const NOOP_MAP = "function (doc) {}";

/** The db was deleted (or deleted and created again) during the pass. */
export class DatabaseGoneError extends Error {
  constructor(db: string) {
    super(`database ${JSON.stringify(db)} was deleted while its view index was being updated`);
    this.name = "DatabaseGoneError";
  }
}

export interface PassDeps {
  readonly dbName: string;
  readonly index: GroupIndex;
  /** The db, or undefined once it is gone. */
  readonly database: () => MemoryDatabase | undefined;
  readonly sandboxes: SandboxCache;
  readonly log: PassLog;
}

export interface PassResult {
  readonly seq: number;
  /** Bytes the index file grew by: > 0 means new rows were committed. */
  readonly appendedBytes: number;
}

interface Page {
  readonly records: readonly DocRecord[];
  readonly lastSeq: number;
  /** Outcomes of the page's mapped docs (live, not design docs), in order. */
  readonly outcomes: Promise<readonly DocOutcome[]>;
}

const functionsOf = (index: GroupIndex): IndexFunctionSource[] => {
  const broken = index.brokenMaps();
  return index.group.maps.map((map, i) => ({ name: `${i}:${map.viewNames.join(",")}`, kind: "map", source: broken.has(i) ? NOOP_MAP : map.source }));
};

/** Keys by `brokenMaps()` set, which an index keeps until a map breaks: one key string per set, not per pass. */
const sandboxKeys = new WeakMap<ReadonlySet<number>, string>();

const sandboxKeyOf = (index: GroupIndex): string => {
  const broken = index.brokenMaps();
  let key = sandboxKeys.get(broken);
  if (key === undefined) {
    key = `${index.signature}|${[...broken].join(",")}`;
    sandboxKeys.set(broken, key);
  }
  return key;
};

const isMapped = (record: DocRecord): boolean => !record.deleted && !isDesignDocId(record.id);

/** The document as CouchDB hands it to a map function, in the JSON text the sandbox reads. */
const docForMap = (record: DocRecord): SerializedDoc => new SerializedDoc(record.id, liveDocJson(record));

/** Deeper keys or values are refused (comparing and sizing them recurses; CouchDB's NIF stops at 10 and falls back). */
const MAX_NESTING = 500;

const nestedDeeperThan = (value: unknown, limit: number): boolean => {
  if (typeof value !== "object" || value === null) return false;
  if (limit <= 0) return true;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (nestedDeeperThan(item, limit - 1)) return true;
  return false;
};

/** A failure when an emitted row cannot be indexed, else undefined. */
const unindexable = (outcome: FunctionOutcome): string | undefined =>
  "emits" in outcome && outcome.emits.some(([key, value]) => nestedDeeperThan(key, MAX_NESTING) || nestedDeeperThan(value, MAX_NESTING))
    ? `an emitted key or value is nested more than ${MAX_NESTING} levels deep`
    : undefined;

const rowsOf = (id: string, outcome: FunctionOutcome | undefined): StoredRow[] | undefined => {
  if (outcome === undefined || !outcome.ok || !("emits" in outcome)) return undefined;
  return outcome.emits.map(([key, value]) => ({
    key,
    id,
    value,
    externalBytes: jsonSize(key) + jsonSize(value) + id.length,
    // Set when staged and committed; present from the start so every row has one shape.
    generation: 0,
    chunk: 0,
    activeBytes: 0,
  }));
};

class Pass {
  private sandbox: { readonly key: string; readonly compiled: CompiledSandbox } | undefined;
  /** Made on the first stop by the sandbox's limits: most passes have none. */
  private limitStops: Map<number, number> | undefined;
  private appendedBytes = 0;

  constructor(private readonly deps: PassDeps) {}

  async run(targetSeq: number): Promise<PassResult> {
    const { index } = this.deps;
    const inFlight: Page[] = [];
    let since = index.seq;
    let exhausted = since >= targetSeq;
    /** Keeps PAGES_IN_FLIGHT pages in the sandbox until the target is read. */
    const feed = async (): Promise<void> => {
      while (!exhausted && inFlight.length < PAGES_IN_FLIGHT) {
        const page = await this.read(since);
        inFlight.push(page);
        since = page.lastSeq;
        exhausted = since >= targetSeq || page.records.length === 0;
      }
    };
    try {
      await feed();
      for (let page = inFlight.shift(); page !== undefined; page = inFlight.shift()) {
        await feed();
        this.stage(page, await page.outcomes);
        if (index.stagedDocs >= Math.min(COMMIT_MAX_DOCS, Math.max(COMMIT_MIN_DOCS, index.rowCount / 8))) this.commit();
      }
      this.commit();
      return { seq: index.seq, appendedBytes: this.appendedBytes };
    } catch (error) {
      index.discardStaged();
      throw error;
    } finally {
      if (this.sandbox !== undefined) this.deps.sandboxes.release(this.sandbox.key);
      this.deps.log.finish((map) => index.group.maps[map]?.viewNames ?? []);
    }
  }

  private database(): MemoryDatabase {
    const db = this.deps.database();
    if (db === undefined) throw new DatabaseGoneError(this.deps.dbName);
    return db;
  }

  /** Reads a page and starts mapping it. */
  private async read(since: number): Promise<Page> {
    const { records, lastSeq } = this.database().latestSince(since, PAGE_DOCS);
    const mapped = records.filter(isMapped);
    if (mapped.length === 0) return { records, lastSeq, outcomes: Promise.resolve([]) };
    const { compiled } = await this.currentSandbox();
    const outcomes = compiled.sandbox.run(mapped.map(docForMap));
    // Awaited in turn; until then a rejection (the sandbox disposed at close) must not count as unhandled.
    outcomes.catch(() => undefined);
    return { records, lastSeq, outcomes };
  }

  private async currentSandbox(): Promise<{ readonly key: string; readonly compiled: CompiledSandbox }> {
    const key = sandboxKeyOf(this.deps.index);
    if (this.sandbox?.key === key) return this.sandbox;
    if (this.sandbox !== undefined) this.deps.sandboxes.release(this.sandbox.key);
    this.sandbox = undefined;
    const compiled = await this.deps.sandboxes.acquire(key, () => functionsOf(this.deps.index));
    this.sandbox = { key, compiled };
    for (const [map, error] of compiled.errors) this.stopMap(map, `compilation_error: ${error}`);
    return this.sandbox;
  }

  private stage(page: Page, outcomes: readonly DocOutcome[]): void {
    this.database(); // the db is still there: what was read is still its data
    const { index } = this.deps;
    let next = 0;
    for (const record of page.records) {
      if (isDesignDocId(record.id)) continue;
      if (record.deleted) {
        index.stage(record.id, undefined, record.seq);
        continue;
      }
      const outcome = outcomes[next++];
      index.stage(record.id, index.group.maps.map((_, map) => this.rowsFor(map, record.id, outcome)), record.seq);
    }
    index.advanceTo(page.lastSeq);
  }

  private rowsFor(map: number, docId: string, outcome: DocOutcome | undefined): StoredRow[] | undefined {
    const result = outcome?.results[map];
    if (map === 0 && outcome !== undefined && outcome.logs.length > 0) this.deps.log.userLog(docId, outcome.logs);
    if (this.deps.index.brokenReason(map) !== undefined || result === undefined) return undefined;
    if (!result.ok) {
      this.failed(map, docId, result.kind, result.error);
      return undefined;
    }
    const refused = unindexable(result);
    if (refused !== undefined) {
      this.failed(map, docId, "exception", refused);
      return undefined;
    }
    return rowsOf(docId, result);
  }

  private failed(map: number, docId: string, kind: "exception" | "timeout" | "memory" | "compile", error: string): void {
    const views = this.deps.index.group.maps[map]?.viewNames ?? [];
    this.deps.log.mapFailed(map, views, docId, kind, error);
    if (kind !== "timeout" && kind !== "memory") return;
    const limitStops = (this.limitStops ??= new Map());
    const stops = (limitStops.get(map) ?? 0) + 1;
    limitStops.set(map, stops);
    if (stops >= LIMIT_STOPS_BEFORE_STOPPING) this.stopMap(map, `stopped by the sandbox's limits on ${stops} documents (${kind}: ${error})`);
  }

  private stopMap(map: number, reason: string): void {
    if (this.deps.index.brokenReason(map) !== undefined) return;
    this.deps.index.markBroken(map, reason);
    this.deps.log.mapStopped(this.deps.index.group.maps[map]?.viewNames ?? [], reason);
  }

  private commit(): void {
    this.appendedBytes += this.deps.index.commit();
  }
}

/** Brings the index up to at least `targetSeq` (it may read further). Rejects when the db goes away. */
export const runUpdatePass = (deps: PassDeps, targetSeq: number): Promise<PassResult> => new Pass(deps).run(targetSeq);
