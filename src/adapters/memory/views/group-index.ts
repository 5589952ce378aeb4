/**
 * One view index group (one signature) of one database: each map
 * function's rows in index order, a back-index (doc id -> its rows) to drop
 * a document's old rows, the db seq indexed, and the bytes of an append-only
 * index file (`storage-model.ts`).
 *
 * Changes are staged document by document and committed in one step per
 * map function: the new sorted row array replaces the old one, so a query
 * holding the old snapshot reads a consistent index while an update runs.
 * A commit appends the rows it wrote to the file, and the b-tree leaves and
 * inner nodes it rewrote, in chunks of `viewWriterDocs` documents as
 * CouchDB's view updater writes them (garbage for what they replace); a
 * view compaction rewrites the file to the live rows.
 */
import { compareRaw, mergeRows, rowCompareOf, keyCompareOf, type KeyCompare, type RowCompare, type RowPositions, type ViewGroup } from "../../../core/views/index.js";
import { compactedFileBytes, type StorageModel } from "../storage-model.js";
import { SizedFile, type SizeAccount } from "../byte-ledger.js";
import { SortedIds } from "../sorted-ids.js";
import { idTreeRewriteBytes, rowTreesRewriteBytes, type RowChanges } from "./commit-bytes.js";
import { SharedUpdate } from "./shared-update.js";
import { chargeAddedRows, type SizedRow } from "./row-bytes.js";

/** A row as the index keeps it: with its JSON size, live bytes and writer chunk for the size model (row-bytes.ts). */
export interface StoredRow extends SizedRow {
  /** The commit generation that staged it (set by `stage`): equal to the current one means not committed yet. */
  generation: number;
  /** Which writer chunk of its commit added or removed it (set by `stage`; see `viewWriterDocs`). */
  chunk: number;
}

/** What the index serves queries from: replaced whole at each commit. */
export interface GroupSnapshot {
  /** The db seq the committed rows reflect. */
  readonly seq: number;
  /** Per map function (the group's `maps`), rows in index order. */
  readonly rows: readonly (readonly StoredRow[])[];
}

interface Staged {
  /** Per map function: rows to add, in staging order (minus `superseded` at the commit). */
  readonly added: StoredRow[][];
  /** Per map function: staged rows replaced before their commit. */
  readonly superseded: Set<StoredRow>[];
  /** Per map function: committed rows to drop. */
  readonly removed: Set<StoredRow>[];
  docs: number;
  seq: number;
  /** Per writer chunk, the ids of the staged docs whose rows changed: the id tree's writes. */
  readonly idsByChunk: string[][];
}

const NO_ROWS: readonly StoredRow[] = [];

/** The same rows in the same order (keys and values equal as JSON terms). */
const sameRows = (a: readonly StoredRow[], b: readonly StoredRow[]): boolean =>
  a.length === b.length && a.every((row, i) => compareRaw(row.key, b[i]!.key) === 0 && compareRaw(row.value, b[i]!.value) === 0);

/** Its file, active and appended bytes come from `SizedFile`, which keeps the store's totals told (see byte-ledger.ts). */
export class GroupIndex extends SizedFile {
  readonly compareKeys: readonly KeyCompare[];
  private readonly compareRows: readonly RowCompare[];
  private current: GroupSnapshot;
  /** Doc id -> its rows per map function, staged ones included. */
  private readonly byDoc = new Map<string, readonly (readonly StoredRow[])[]>();
  /** The id tree's order, for the leaves a commit touches there. */
  private readonly docOrder = new SortedIds(() => this.byDoc.keys());
  /**
   * What the pass under way staged; made by its first document, not at the
   * last commit: made there, it lived from one pass of this index to the
   * next, long enough to be copied by the young generation's GC and
   * promoted, once per pass (bench:simulate's 167,000 passes in 6 h).
   */
  private pendingStage: Staged | undefined = undefined;
  /** Counts commits: a row whose `generation` is this one is staged, not committed. */
  private generation = 1;
  /** Per map function: why it no longer runs (compile error, stopped by the sandbox's limits). */
  private readonly broken: (string | undefined)[];
  /** `brokenMaps()` until a map breaks: each update pass asks for it. */
  private brokenSet: ReadonlySet<number> | undefined;
  readonly update = new SharedUpdate();
  externalBytes = 0;
  needsUpgrade = false;

  constructor(
    readonly signature: string,
    readonly group: ViewGroup,
    private readonly model: StorageModel,
    /** The store's sums over view index files, which this file keeps up to date. */
    account?: SizeAccount,
  ) {
    super(account, model.viewHeaderBytes);
    this.compareKeys = group.maps.map((map) => keyCompareOf(map.collation));
    this.compareRows = this.compareKeys.map(rowCompareOf);
    this.current = { seq: 0, rows: group.maps.map(() => NO_ROWS) };
    this.broken = group.maps.map(() => undefined);
  }

  snapshot(): GroupSnapshot {
    return this.current;
  }

  get seq(): number {
    return this.current.seq;
  }

  get rowCount(): number {
    return this.current.rows.reduce((sum, rows) => sum + rows.length, 0);
  }

  brokenReason(map: number): string | undefined {
    return this.broken[map];
  }

  /** Map functions that must not run again (their rows stay as they were). */
  brokenMaps(): ReadonlySet<number> {
    this.brokenSet ??= new Set(this.broken.flatMap((reason, map) => (reason === undefined ? [] : [map])));
    return this.brokenSet;
  }

  markBroken(map: number, reason: string): void {
    if (this.broken[map] !== undefined) return;
    this.broken[map] = reason;
    this.brokenSet = undefined;
  }

  /**
   * A document's rows now: `rows[map]` replaces what it had (undefined: the
   * function failed on it, so it has none there). A deleted document passes
   * `undefined` for all.
   */
  stage(docId: string, rows: readonly (readonly StoredRow[] | undefined)[] | undefined, seq: number): void {
    const before = this.byDoc.get(docId);
    const mapCount = this.group.maps.length;
    const chunk = Math.floor(this.staged.docs / this.model.viewWriterDocs);
    const after = new Array<readonly StoredRow[]>(mapCount);
    let empty = true;
    let changed = false;
    for (let map = 0; map < mapCount; map++) {
      const old = before === undefined ? NO_ROWS : before[map]!;
      const next = rows === undefined ? NO_ROWS : (rows[map] ?? NO_ROWS);
      // Rows a document emits again unchanged stay as they are: CouchDB does not rewrite them either.
      const kept = old.length === 0 && next.length === 0 ? NO_ROWS : sameRows(old, next) ? old : next;
      if (kept !== old) {
        changed = true;
        // A row staged and not yet committed just goes; a committed one is removed at the commit.
        for (const row of old) {
          if (row.generation === this.generation) this.staged.superseded[map]!.add(row);
          else {
            row.chunk = chunk;
            this.staged.removed[map]!.add(row);
          }
        }
        const added = this.staged.added[map]!;
        for (const row of next) {
          row.generation = this.generation;
          row.chunk = chunk;
          added.push(row);
        }
      }
      after[map] = kept;
      if (kept.length > 0) empty = false;
    }
    if (empty) {
      if (before !== undefined) this.docOrder.remove(docId);
      this.byDoc.delete(docId);
    } else {
      if (before === undefined) this.docOrder.add(docId);
      this.byDoc.set(docId, after);
    }
    // couch_btree leaves a node whose entries did not change as it is: only a doc whose rows changed rewrites its id entry.
    if (changed) (this.staged.idsByChunk[chunk] ??= []).push(docId);
    this.staged.docs++;
    if (seq > this.staged.seq) this.staged.seq = seq;
  }

  /** Documents staged since the last commit. */
  get stagedDocs(): number {
    return this.pendingStage?.docs ?? 0;
  }

  private get staged(): Staged {
    return (this.pendingStage ??= this.emptyStage());
  }

  /** Mark seqs read that produced nothing to stage (design docs, an empty page). */
  advanceTo(seq: number): void {
    this.staged.seq = Math.max(this.staged.seq, seq);
  }

  /** Make the staged changes the index. Returns the bytes the file grew by. */
  commit(): number {
    const { added, superseded, removed, seq, idsByChunk, docs } = this.staged;
    let writtenActive = 0;
    let removedActive = 0;
    const changes: RowChanges<StoredRow>[] = [];
    const rows = this.current.rows.map((old, map) => {
      const dropped = superseded[map]!;
      const adding = dropped.size === 0 ? added[map]! : added[map]!.filter((row) => !dropped.has(row));
      const removing = removed[map]!;
      if (adding.length === 0 && removing.size === 0) return old;
      writtenActive += chargeAddedRows(this.model, adding);
      for (const row of adding) this.externalBytes += row.externalBytes;
      for (const row of removing) {
        removedActive += row.activeBytes;
        this.externalBytes -= row.externalBytes;
      }
      const positions: RowPositions<StoredRow> = new Map();
      const merged = mergeRows(old, removing, adding, this.compareRows[map]!, positions);
      changes.push({ rowsBefore: old.length, rowsAfter: merged.length, adding, removing, positions });
      return merged;
    });
    this.setActiveBytes(Math.max(0, this.activeBytes - removedActive + writtenActive));
    const appended = changes.length === 0 ? 0 : this.appendedBytes(writtenActive, changes, rows, idsByChunk, docs);
    this.append(appended);
    this.current = { seq: Math.max(this.current.seq, seq), rows };
    this.generation++;
    this.pendingStage = undefined;
    return appended;
  }

  /** Drop what was staged (a failed update): the back-index is rebuilt from the committed rows. */
  discardStaged(): void {
    if (this.stagedDocs === 0) return;
    this.byDoc.clear();
    this.current.rows.forEach((rows, map) => {
      for (const row of rows) {
        const perMap = [...(this.byDoc.get(row.id) ?? this.group.maps.map(() => NO_ROWS))];
        perMap[map] = [...perMap[map]!, row];
        this.byDoc.set(row.id, perMap);
      }
    });
    this.docOrder.reset();
    this.generation++;
    this.pendingStage = undefined;
  }

  /** The commit's new rows, and the leaves and inner nodes it rewrote (commit-bytes.ts). */
  private appendedBytes(writtenActive: number, changes: readonly RowChanges<StoredRow>[], rows: readonly (readonly StoredRow[])[], idsByChunk: readonly string[][], docs: number): number {
    const rowCount = rows.reduce((sum, list) => sum + list.length, 0);
    const chunks = Math.ceil(docs / this.model.viewWriterDocs);
    // A leaf holds the rows compressed; a row's overhead (its back-index entry) lives in the id tree.
    const meanRow = { externalBytes: this.externalBytes / Math.max(1, rowCount), leafBytes: Math.max(1, this.activeBytes / Math.max(1, rowCount) - this.model.viewRowOverheadBytes) };
    return (
      Math.ceil(writtenActive * this.model.viewAppendFactor) +
      rowTreesRewriteBytes(this.model, changes, chunks, meanRow) +
      idTreeRewriteBytes(this.model, idsByChunk, this.docOrder, this.byDoc.size)
    );
  }

  /** Swap in a compacted file: the live rows only. Returns bytes reclaimed. */
  compact(): number {
    const compacted = Math.min(this.fileBytes, compactedFileBytes(this.model, this.activeBytes, this.model.viewHeaderBytes));
    const reclaimed = this.fileBytes - compacted;
    this.setFileBytes(compacted);
    this.needsUpgrade = false;
    return reclaimed;
  }

  private emptyStage(): Staged {
    const perMap = <T>(make: () => T): T[] => this.group.maps.map(make);
    return { added: perMap(() => []), superseded: perMap(() => new Set()), removed: perMap(() => new Set()), docs: 0, seq: this.current.seq, idsByChunk: [] };
  }
}
