/**
 * The view indexes of one database: which group (signature) each design
 * doc defines, and one index per signature, shared by the design docs with
 * identical views, as in CouchDB. When a design doc changes its views, the
 * old signature's index stays (its file on disk) until `_view_cleanup`
 * removes it, unless another design doc still uses it.
 */
import { viewGroupOf, type ViewGroup } from "../../../core/views/index.js";
import { bodyOf, type DocRecord } from "../database.js";
import { stableDigest } from "../revisions.js";
import type { SizeAccount } from "../byte-ledger.js";
import type { StorageModel } from "../storage-model.js";
import { GroupIndex } from "./group-index.js";

export interface DesignDocGroup {
  readonly signature: string;
  readonly group: ViewGroup;
}

export const signatureOf = (group: ViewGroup): string => stableDigest(group.signatureInput);

export class DbViews {
  private readonly ddocs = new Map<string, DesignDocGroup>();
  private readonly indexes = new Map<string, GroupIndex>();
  /**
   * `indexesInUse()` and `ddocsUsing()` as last computed, until a design doc
   * or an index comes or goes: every auto-index pass asked for them, a few
   * arrays and a sort each time.
   */
  private inUse: readonly GroupIndex[] | undefined;
  private readonly using = new Map<string, readonly string[]>();

  constructor(
    private readonly model: StorageModel,
    /** The store's sums over view index files, which each index file here keeps up to date (see byte-ledger.ts). */
    private readonly account?: SizeAccount,
  ) {}

  /** Track a written design doc. Returns true when its views (signature) changed. */
  onDesignDocWritten(record: DocRecord): boolean {
    this.forgetDerived();
    const before = this.ddocs.get(record.id)?.signature;
    const group = record.deleted ? undefined : viewGroupOf(bodyOf(record));
    if (group === undefined) {
      this.ddocs.delete(record.id);
      return before !== undefined;
    }
    const signature = signatureOf(group);
    this.ddocs.set(record.id, { signature, group });
    if (!this.indexes.has(signature)) this.indexes.set(signature, new GroupIndex(signature, group, this.model, this.account));
    return before !== signature;
  }

  /** Some design doc defines views (so writes should eventually be indexed). */
  hasViews(): boolean {
    return this.ddocs.size > 0;
  }

  groupOf(ddoc: string): DesignDocGroup | undefined {
    return this.ddocs.get(ddoc);
  }

  /** The index serving `ddoc`, if it defines views. */
  indexFor(ddoc: string): GroupIndex | undefined {
    const group = this.ddocs.get(ddoc);
    return group === undefined ? undefined : this.indexes.get(group.signature);
  }

  indexBySignature(signature: string): GroupIndex | undefined {
    return this.indexes.get(signature);
  }

  ddocsUsing(signature: string): readonly string[] {
    let ids = this.using.get(signature);
    if (ids === undefined) {
      ids = [...this.ddocs].filter(([, group]) => group.signature === signature).map(([id]) => id).sort();
      this.using.set(signature, ids);
    }
    return ids;
  }

  /** The indexes some design doc uses. */
  indexesInUse(): readonly GroupIndex[] {
    this.inUse ??= [...new Set([...this.ddocs.values()].map((group) => group.signature))].sort().flatMap((signature) => {
      const index = this.indexes.get(signature);
      return index === undefined ? [] : [index];
    });
    return this.inUse;
  }

  /** Index files no design doc uses any more (what `_view_cleanup` deletes). */
  staleSignatures(): string[] {
    const inUse = new Set([...this.ddocs.values()].map((group) => group.signature));
    return [...this.indexes.keys()].filter((signature) => !inUse.has(signature)).sort();
  }

  /** Delete stale index files, except `keep` (being compacted or updated). Returns bytes reclaimed. */
  cleanup(keep: (index: GroupIndex) => boolean): number {
    let reclaimedBytes = 0;
    for (const signature of this.staleSignatures()) {
      const index = this.indexes.get(signature);
      if (index === undefined || keep(index)) continue;
      reclaimedBytes += index.fileBytes;
      index.detach();
      this.indexes.delete(signature);
      this.forgetDerived();
    }
    return reclaimedBytes;
  }

  private forgetDerived(): void {
    this.inUse = undefined;
    this.using.clear();
  }

  /** Index files of this db, stale ones included. */
  get indexCount(): number {
    return this.indexes.size;
  }

  /** The db left the store: its index files leave the totals. */
  detach(): void {
    for (const index of this.indexes.values()) index.detach();
  }

  /** Total bytes of every index file of this db, stale ones included (a recount: the store's totals are kept running). */
  totals(): { fileBytes: number; activeBytes: number } {
    let fileBytes = 0;
    let activeBytes = 0;
    for (const index of this.indexes.values()) {
      fileBytes += index.fileBytes;
      activeBytes += index.activeBytes;
    }
    return { fileBytes, activeBytes };
  }
}
