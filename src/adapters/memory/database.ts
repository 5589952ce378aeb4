/**
 * One in-memory database: documents with revisions (MVCC), an integer update
 * sequence, the changes feed, and the append-only byte accounting of
 * `storage-model.ts`.
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import type { ChangeRow, ChangesPage, ChangesQuery, DocWriteResult, StoredDoc } from "../../ports/store.js";
import { docIdProblem, isDesignDocId } from "./names.js";
import { makeRev, revGeneration } from "./revisions.js";
import { SizedFile, type SizeAccount } from "./byte-ledger.js";
import { SortedIds } from "./sorted-ids.js";
import { storedBodyBytes } from "./compression.js";
import {
  btreeRewriteBytes,
  commitGrowthBytes,
  compactedFileBytes,
  dbBtreeShape,
  docEntryBytes,
  leafIndexOf,
  sortLeaves,
  stubSavingBytes,
  type BtreeShape,
  type StorageModel,
} from "./storage-model.js";

/** The latest revision of a document (older ones exist only as garbage bytes and rev-tree stubs). */
export interface DocRecord {
  readonly id: string;
  readonly rev: string;
  readonly generation: number;
  readonly deleted: boolean;
  /**
   * Fields other than `_id`, `_rev`, `_deleted`, as the JSON text written
   * (a JSON object), as a db file holds it: what was stored cannot change
   * through an object the writer or a reader still holds, and a view pass
   * hands it to the sandbox without serializing it again. `bodyOf` parses it.
   */
  readonly bodyJson: string;
  readonly seq: number;
  /** Past revisions that a compaction left as stubs (storage-model.ts, `compactedRevisionStubBytes`). */
  readonly stubbedRevisions: number;
  /** What this entry counts in `activeBytes`. */
  readonly entryBytes: number;
}

/** The boundary codec for a document write: anything else is rejected per doc, never thrown. */
const DocWriteCodec = t.intersection([
  t.type({ _id: t.string }),
  t.partial({ _rev: t.union([t.string, t.undefined]), _deleted: t.union([t.boolean, t.undefined]) }),
]);

type DocWrite = t.TypeOf<typeof DocWriteCodec>;

/**
 * Exactly what `DocWriteCodec` accepts (a non-array object, a string `_id`,
 * `_rev` a string or absent, `_deleted` a boolean or absent), tested without
 * io-ts: its decode cost a tenth of a simulated write. Anything else still
 * goes through the codec, so the errors are unchanged.
 */
const isPlainDocWrite = (doc: unknown): doc is DocWrite => {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return false;
  const { _id, _rev, _deleted } = doc as Record<string, unknown>;
  return typeof _id === "string" && (_rev === undefined || typeof _rev === "string") && (_deleted === undefined || typeof _deleted === "boolean");
};

export interface WriteBatchResult {
  readonly results: DocWriteResult[];
  /** Documents written, in order (for events and view indexes). */
  readonly written: readonly DocRecord[];
}

/** A rejected `since`/`limit`; the store turns it into a rejected promise. */
export class ChangesQueryError extends Error {}

export interface DatabaseOptions {
  /** Create the file in an older on-disk format (compaction upgrades it). */
  readonly diskFormatVersion?: number | undefined;
}

/** Its file, active and appended bytes come from `SizedFile`, which keeps the store's totals told (see byte-ledger.ts). */
export class MemoryDatabase extends SizedFile {
  readonly name: string;
  private readonly model: StorageModel;
  /** The model's by-id and by-seq trees. */
  private readonly tree: BtreeShape;
  private readonly docs = new Map<string, DocRecord>();
  private readonly designIds = new Set<string>();
  /**
   * Seq order of writes, as two parallel arrays (seq, doc id): entries whose
   * doc moved on are stale and skipped (compacted when they pile up). Not an
   * object per entry: one per write outlived the young generation, and GC was
   * a fifth of bench:simulate.
   */
  private logSeqs: number[] = [];
  private logIds: string[] = [];
  private staleLogEntries = 0;
  /** By-id order, for the leaves a batch touches. */
  private readonly sortedIds = new SortedIds(() => this.docs.keys());
  /**
   * Scratch of `writeBatch`: where the updated docs' old entries sat in the
   * by-seq tree (then their leaves, and the tail's). Emptied, not made anew,
   * per batch: a new one lived until the db's next write and was copied by
   * the young generation's GC.
   */
  private readonly oldSeqPositions: number[] = [];

  updateSeq = 0;
  compactedSeq: number | undefined = undefined;
  docCount = 0;
  docDelCount = 0;
  /** Live documents that are not design docs: what view indexes index. */
  liveDataDocs = 0;
  diskFormatVersion: number;

  /** `account`: the store's sums over db files, which this file keeps up to date. */
  constructor(name: string, model: StorageModel, options: DatabaseOptions = {}, account?: SizeAccount) {
    super(account, model.headerBytes);
    this.name = name;
    this.model = model;
    this.tree = dbBtreeShape(model);
    this.diskFormatVersion = options.diskFormatVersion ?? model.currentDiskFormatVersion;
  }

  get needsUpgrade(): boolean {
    return this.diskFormatVersion < this.model.currentDiskFormatVersion;
  }

  getDoc(id: string): DocRecord | undefined {
    return this.docs.get(id);
  }

  designDocIds(): string[] {
    return [...this.designIds].sort();
  }

  /**
   * `_bulk_docs` with `new_edits=true`: each doc must name the current rev to
   * update it (none to create, or to recreate over a tombstone). All the
   * successful writes of one call are one append (one b-tree path rewrite).
   */
  writeBatch(docs: readonly unknown[]): WriteBatchResult {
    const results: DocWriteResult[] = [];
    const written: DocRecord[] = [];
    this.oldSeqPositions.length = 0;
    for (const doc of docs) {
      const outcome = this.writeOne(doc);
      if ("error" in outcome) {
        results.push({ id: idOf(doc), ok: false, error: outcome.error, reason: outcome.reason });
      } else {
        results.push({ id: outcome.id, ok: true, rev: outcome.rev });
        written.push(outcome);
      }
    }
    if (written.length > 0) {
      let appended = this.btreeBytes(written);
      for (const record of written) appended += record.entryBytes;
      this.append(commitGrowthBytes(this.model, this.fileBytes, appended));
    }
    return { results, written };
  }

  /**
   * What a commit of `written` rewrites in the by-id and by-seq trees: the
   * leaves of their ids, the leaves their old seqs left and the tail where
   * the new seqs go, with the inner nodes above them.
   */
  private btreeBytes(written: readonly DocRecord[]): number {
    const entries = this.docs.size;
    const tree = this.tree;
    const byId = this.sortedIds.leavesOf(written.map((record) => record.id), tree);
    const bySeq = this.oldSeqPositions;
    for (let i = 0; i < bySeq.length; i++) bySeq[i] = leafIndexOf(tree, bySeq[i]!);
    for (let leaf = leafIndexOf(tree, entries - written.length); leaf <= leafIndexOf(tree, entries - 1); leaf++) bySeq.push(leaf);
    return btreeRewriteBytes(tree, byId, written.length, entries) + btreeRewriteBytes(tree, sortLeaves(bySeq), written.length, entries);
  }

  /** Where the entry of `seq` sits among the by-seq tree's live entries, estimated from its place in the log (which also holds stale entries). */
  private seqPosition(seq: number): number {
    return Math.floor((this.firstLogIndexAfter(seq - 1) * this.docs.size) / Math.max(1, this.logSeqs.length));
  }

  private writeOne(doc: unknown): DocRecord | { error: string; reason: string } {
    let write: DocWrite;
    if (isPlainDocWrite(doc)) write = doc;
    else {
      const decoded = DocWriteCodec.decode(doc);
      if (isLeft(decoded)) {
        return { error: "bad_request", reason: "Document must be a JSON object with a string _id" };
      }
      write = decoded.right;
    }
    const idProblem = docIdProblem(write._id);
    if (idProblem !== undefined) return { error: "illegal_docid", reason: idProblem };
    const existing = this.docs.get(write._id);
    // The current rev was made here, so it is well-formed: only another one is scanned (most writes name the current one).
    if (write._rev !== undefined && write._rev !== existing?.rev && revGeneration(write._rev) === undefined) {
      return { error: "bad_request", reason: `Invalid rev format: ${JSON.stringify(write._rev)}` };
    }
    const matches =
      existing === undefined
        ? write._rev === undefined
        : write._rev === existing.rev || (write._rev === undefined && existing.deleted);
    if (!matches) return { error: "conflict", reason: "Document update conflict." };

    const body: Record<string, unknown> = {};
    // Object.keys: the own enumerable keys, in the order Object.entries gives them, without a pair per field.
    const fields = doc as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (key === "__proto__") Object.defineProperty(body, key, { value: fields[key], enumerable: true, writable: true, configurable: true });
      else if (key !== "_id" && key !== "_rev" && key !== "_deleted") body[key] = fields[key];
    }
    let bodyJson: string;
    try {
      bodyJson = JSON.stringify(body);
    } catch (error) {
      return { error: "bad_request", reason: `Document body is not JSON: ${String(error)}` };
    }
    const deleted = write._deleted === true;
    const generation = (existing?.generation ?? 0) + 1;
    const bodyBytes = deleted && bodyJson === "{}" ? 0 : storedBodyBytes(bodyJson, this.model.fileCompression);
    const stubbedRevisions = existing?.stubbedRevisions ?? 0;
    const record: DocRecord = {
      id: write._id,
      rev: makeRev(write._id, generation, existing?.rev, deleted, bodyJson),
      generation,
      deleted,
      bodyJson,
      seq: ++this.updateSeq,
      stubbedRevisions,
      entryBytes: docEntryBytes(this.model, bodyBytes, generation, stubbedRevisions),
    };
    if (existing === undefined) this.sortedIds.add(record.id);
    else this.oldSeqPositions.push(this.seqPosition(existing.seq));
    this.replace(existing, record);
    return record;
  }

  private replace(existing: DocRecord | undefined, record: DocRecord): void {
    const isDesign = isDesignDocId(record.id);
    if (existing !== undefined) {
      this.addActiveBytes(-existing.entryBytes);
      if (existing.deleted) this.docDelCount--;
      else {
        this.docCount--;
        if (!isDesign) this.liveDataDocs--;
      }
      this.staleLogEntries++;
    }
    this.addActiveBytes(record.entryBytes);
    if (record.deleted) this.docDelCount++;
    else {
      this.docCount++;
      if (!isDesign) this.liveDataDocs++;
    }
    if (isDesign) {
      if (record.deleted) this.designIds.delete(record.id);
      else this.designIds.add(record.id);
    }
    this.docs.set(record.id, record);
    this.logSeqs.push(record.seq);
    this.logIds.push(record.id);
    if (this.staleLogEntries > 1024 && this.staleLogEntries > this.logSeqs.length / 2) this.compactSeqLog();
  }

  private compactSeqLog(): void {
    const seqs: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < this.logSeqs.length; i++) {
      if (this.isLatest(i)) {
        seqs.push(this.logSeqs[i]!);
        ids.push(this.logIds[i]!);
      }
    }
    this.logSeqs = seqs;
    this.logIds = ids;
    this.staleLogEntries = 0;
  }

  /** Documents (design docs excluded) changed after `sinceSeq`, each counted once. */
  changedDataDocsSince(sinceSeq: number): number {
    let count = 0;
    for (let i = this.firstLogIndexAfter(sinceSeq); i < this.logSeqs.length; i++) {
      if (this.isLatest(i) && !isDesignDocId(this.logIds[i]!)) count++;
    }
    return count;
  }

  /** Documents (design docs included) changed after `sinceSeq`, each counted once: a view's `updates_pending`. */
  changedDocsSince(sinceSeq: number): number {
    let count = 0;
    for (let i = this.firstLogIndexAfter(sinceSeq); i < this.logSeqs.length; i++) {
      if (this.isLatest(i)) count++;
    }
    return count;
  }

  /**
   * Up to `limit` documents changed after `sinceSeq`, at their latest
   * revision, in seq order (what a view index reads), and the seq read up
   * to: the last one's, or the db's when none is left.
   */
  latestSince(sinceSeq: number, limit: number): { readonly records: readonly DocRecord[]; readonly lastSeq: number } {
    const records: DocRecord[] = [];
    for (let i = this.firstLogIndexAfter(sinceSeq); i < this.logSeqs.length && records.length < limit; i++) {
      const record = this.docs.get(this.logIds[i]!);
      if (record !== undefined && record.seq === this.logSeqs[i]) records.push(record);
    }
    const last = records[records.length - 1];
    return { records, lastSeq: records.length < limit || last === undefined ? this.updateSeq : last.seq };
  }

  /**
   * CouchDB `_changes` (style=main_only): one row per document at its latest
   * seq, `since` exclusive. `last_seq` is the last row's seq when `limit` cut
   * the page short (`since` for limit=0), else the db's current seq
   * (ascending) or the oldest row's seq (descending; `since` when nothing matched).
   */
  changes(query: ChangesQuery): ChangesPage {
    const since = this.parseSince(query.since);
    const limit = parseLimit(query.limit);
    const results: ChangeRow[] = [];
    const start = this.firstLogIndexAfter(since);
    const take = (i: number): boolean => {
      const record = this.docs.get(this.logIds[i]!);
      if (record === undefined || record.seq !== this.logSeqs[i]) return true;
      if (results.length >= limit) return false;
      results.push({
        id: record.id,
        seq: String(record.seq),
        rev: record.rev,
        ...(record.deleted ? { deleted: true } : {}),
        ...(query.includeDocs === true ? { doc: toStoredDoc(record) } : {}),
      });
      return true;
    };
    let cutShort = false;
    if (query.descending === true) {
      for (let i = this.logSeqs.length - 1; i >= start && !cutShort; i--) cutShort = !take(i);
      const last = results[results.length - 1];
      return { results, lastSeq: last !== undefined ? last.seq : String(since) };
    }
    for (let i = start; i < this.logSeqs.length && !cutShort; i++) cutShort = !take(i);
    const last = results[results.length - 1];
    // Cut short by `limit`: resume after the last row (or where we started, for limit=0).
    if (cutShort) return { results, lastSeq: last !== undefined ? last.seq : String(since) };
    return { results, lastSeq: String(this.updateSeq) };
  }

  /** `"now"`, `"0"`, undefined, an integer, or a clustered-looking `N-opaque` (its `N`). */
  parseSince(since: string | undefined): number {
    if (since === undefined || since === "" || since === "0") return 0;
    if (since === "now") return this.updateSeq;
    const match = /^(0|[1-9][0-9]*)(-.*)?$/.exec(since);
    const value = match === null ? NaN : Number(match[1]);
    if (!Number.isSafeInteger(value)) {
      throw new ChangesQueryError(`changes: since=${JSON.stringify(since)} is not a sequence (expected "now", or an integer)`);
    }
    return value;
  }

  /** Swap in the compacted file: only live entries remain; the format is upgraded. Returns bytes reclaimed. */
  applyCompaction(): number {
    this.stubPastRevisions();
    // A file with no garbage does not grow by being compacted (the real copy drops node slack too).
    const compacted = Math.min(this.fileBytes, compactedFileBytes(this.model, this.activeBytes));
    const reclaimedBytes = this.fileBytes - compacted;
    this.setFileBytes(compacted);
    this.compactedSeq = this.updateSeq;
    this.diskFormatVersion = this.model.currentDiskFormatVersion;
    this.compactSeqLog();
    return reclaimedBytes;
  }

  /** The compactor copies each doc's rev tree with its past revisions as stubs: their entries, and the active size, shrink. */
  private stubPastRevisions(): void {
    let savedBytes = 0;
    for (const record of this.docs.values()) {
      const stubbedRevisions = record.generation - 1;
      if (record.stubbedRevisions === stubbedRevisions) continue;
      const saved =
        stubSavingBytes(this.model, record.generation, stubbedRevisions) - stubSavingBytes(this.model, record.generation, record.stubbedRevisions);
      savedBytes += saved;
      // Field by field, in writeOne's order: every record keeps one shape.
      this.docs.set(record.id, {
        id: record.id,
        rev: record.rev,
        generation: record.generation,
        deleted: record.deleted,
        bodyJson: record.bodyJson,
        seq: record.seq,
        stubbedRevisions,
        entryBytes: record.entryBytes - saved,
      });
    }
    if (savedBytes > 0) this.addActiveBytes(-savedBytes);
  }

  /** The log entry at `i` is its doc's latest write. */
  private isLatest(i: number): boolean {
    return this.docs.get(this.logIds[i]!)?.seq === this.logSeqs[i];
  }

  /** Binary search: seqs in the log are strictly increasing. */
  private firstLogIndexAfter(seq: number): number {
    let low = 0;
    let high = this.logSeqs.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.logSeqs[mid]! <= seq) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

function parseLimit(limit: number | undefined): number {
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new ChangesQueryError(`changes: limit=${String(limit)} is not a non-negative integer`);
  }
  return limit;
}

/** The `_id` of a would-be document, `""` when it has none (for per-doc error rows). */
export function idOf(doc: unknown): string {
  if (doc !== null && typeof doc === "object" && typeof (doc as { _id?: unknown })._id === "string") {
    return (doc as { _id: string })._id;
  }
  return "";
}

/** The record's body, parsed afresh: the caller may keep or change it. */
export function bodyOf(record: DocRecord): Record<string, unknown> {
  return JSON.parse(record.bodyJson) as Record<string, unknown>;
}

/**
 * A stored document as CouchDB returns it, in its key order (`couch_doc:to_json_obj`):
 * `_id`, `_rev`, the body, then `_deleted` for a tombstone. The same order as
 * `liveDocJson`, so a read and a map function see one document.
 */
export function toStoredDoc(record: DocRecord): StoredDoc {
  return { _id: record.id, _rev: record.rev, ...bodyOf(record), ...(record.deleted ? { _deleted: true } : {}) };
}

/**
 * A live document as CouchDB shows it to a map function or with
 * `include_docs` (`_id` and `_rev` first, then the body), as JSON text: the
 * stored body spliced in, not parsed and serialized again.
 */
export function liveDocJson(record: DocRecord): string {
  const head = `{"_id":${JSON.stringify(record.id)},"_rev":${JSON.stringify(record.rev)}`;
  return record.bodyJson === "{}" ? `${head}}` : `${head},${record.bodyJson.slice(1)}`;
}
