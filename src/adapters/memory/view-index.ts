/**
 * View index groups of one database, modelled by size only (no JavaScript
 * runs here): one index file per distinct signature, shared by design docs
 * with identical views, as in CouchDB. A build appends a row per changed
 * document per view (garbage for rows it replaces); active bytes are one row
 * per live document per view. When a design doc changes its views, the old
 * signature's file stays on disk until `_view_cleanup` removes it.
 */
import type { DocRecord, MemoryDatabase } from "./database.js";
import { stableDigest } from "./revisions.js";
import { type StorageModel, viewActiveBytes, viewUpdateAppendBytes } from "./storage-model.js";

export interface ViewIndexFile {
  readonly signature: string;
  readonly viewCount: number;
  fileBytes: number;
  activeBytes: number;
  /** The db seq this index has seen. */
  indexedSeq: number;
  needsUpgrade: boolean;
  appendedBytesTotal: number;
}

interface DesignDocViews {
  readonly signature: string;
  readonly viewCount: number;
}

/** The signature of a design doc's views, or `undefined` when it defines none (no index). */
export function viewGroupOf(body: Readonly<Record<string, unknown>>): DesignDocViews | undefined {
  const views = body["views"];
  if (views === null || typeof views !== "object" || Array.isArray(views)) return undefined;
  const viewCount = Object.keys(views).length;
  if (viewCount === 0) return undefined;
  const signature = stableDigest({ language: body["language"] ?? "javascript", views, options: body["options"] ?? {} });
  return { signature, viewCount };
}

export class ViewIndexes {
  private readonly model: StorageModel;
  private readonly ddocs = new Map<string, DesignDocViews>();
  private readonly files = new Map<string, ViewIndexFile>();

  constructor(model: StorageModel) {
    this.model = model;
  }

  /** Track a written design doc. Returns true when its views (signature) changed. */
  onDesignDocWritten(record: DocRecord): boolean {
    const before = this.ddocs.get(record.id)?.signature;
    const group = record.deleted ? undefined : viewGroupOf(record.body);
    if (group === undefined) this.ddocs.delete(record.id);
    else {
      this.ddocs.set(record.id, group);
      if (!this.files.has(group.signature)) {
        this.files.set(group.signature, {
          signature: group.signature,
          viewCount: group.viewCount,
          fileBytes: this.model.viewHeaderBytes,
          activeBytes: 0,
          indexedSeq: 0,
          needsUpgrade: false,
          appendedBytesTotal: 0,
        });
      }
    }
    return before !== group?.signature;
  }

  /** Some design doc defines views (so writes should eventually be indexed). */
  hasViews(): boolean {
    return this.ddocs.size > 0;
  }

  /** The index file serving `ddoc`, if it defines views. */
  fileFor(ddoc: string): ViewIndexFile | undefined {
    const group = this.ddocs.get(ddoc);
    return group === undefined ? undefined : this.files.get(group.signature);
  }

  fileBySignature(signature: string): ViewIndexFile | undefined {
    return this.files.get(signature);
  }

  ddocsUsing(signature: string): string[] {
    return [...this.ddocs].filter(([, group]) => group.signature === signature).map(([id]) => id).sort();
  }

  /**
   * Bring every index in use up to the db's seq. Returns the design docs
   * whose index committed new data (a `view-updated` each).
   */
  build(db: MemoryDatabase): string[] {
    const updated: string[] = [];
    for (const signature of new Set([...this.ddocs.values()].map((group) => group.signature))) {
      const file = this.files.get(signature);
      if (file === undefined || file.indexedSeq >= db.updateSeq) continue;
      const changedDocs = db.changedDataDocsSince(file.indexedSeq);
      const appended = viewUpdateAppendBytes(this.model, changedDocs, file.viewCount, db.liveDataDocs);
      file.fileBytes += appended;
      file.appendedBytesTotal += appended;
      file.activeBytes = viewActiveBytes(this.model, db.liveDataDocs, file.viewCount);
      file.indexedSeq = db.updateSeq;
      if (changedDocs > 0) updated.push(...this.ddocsUsing(signature));
    }
    return updated.sort();
  }

  /** Index files no design doc uses any more (what `_view_cleanup` deletes). */
  staleSignatures(): string[] {
    const inUse = new Set([...this.ddocs.values()].map((group) => group.signature));
    return [...this.files.keys()].filter((signature) => !inUse.has(signature)).sort();
  }

  /** Delete stale index files, except `keep` (e.g. being compacted). Returns bytes reclaimed. */
  cleanup(keep: (signature: string) => boolean): number {
    let reclaimedBytes = 0;
    for (const signature of this.staleSignatures()) {
      const file = this.files.get(signature);
      if (file === undefined || keep(signature)) continue;
      reclaimedBytes += file.fileBytes;
      this.files.delete(signature);
    }
    return reclaimedBytes;
  }

  /** Total bytes of every index file of this db, stale ones included. */
  totals(): { fileBytes: number; activeBytes: number } {
    let fileBytes = 0;
    let activeBytes = 0;
    for (const file of this.files.values()) {
      fileBytes += file.fileBytes;
      activeBytes += file.activeBytes;
    }
    return { fileBytes, activeBytes };
  }
}

/** Swap in a compacted view file; returns bytes reclaimed. */
export function applyViewCompaction(model: StorageModel, file: ViewIndexFile): number {
  const compacted = Math.min(
    file.fileBytes,
    model.viewHeaderBytes + Math.ceil(file.activeBytes * (1 + model.compactedOverheadRatio)),
  );
  const reclaimedBytes = file.fileBytes - compacted;
  file.fileBytes = compacted;
  file.needsUpgrade = false;
  return reclaimedBytes;
}
