/**
 * A db's document ids in CouchDB's by-id order, to tell which b-tree leaves
 * a batch of writes lands in (storage-model.ts, `leafIndexOf` and
 * `btreeRewriteBytes`); also the id tree of a view index.
 *
 * Built on the first batch of more than one write and kept up lazily: new
 * ids wait in `pending` and are merged in when the next batch asks. A db
 * that only ever sees one-document writes (bench:simulate's) never sorts:
 * a single write touches one leaf wherever its id falls. A db's ids only
 * join (CouchDB keeps tombstones in the by-id tree and the store has no
 * purge); a view's id tree loses the docs that emit nothing.
 */
import { leafIndexOf, type BtreeShape } from "./storage-model.js";

export class SortedIds {
  private sorted: string[] | undefined = undefined;
  private pending: string[] = [];

  /** `allIds`: every id the db holds, read once when the index is first needed. */
  constructor(private readonly allIds: () => Iterable<string>) {}

  /** A new id entered the db. */
  add(id: string): void {
    if (this.sorted !== undefined) this.pending.push(id);
  }

  /** The ids changed wholesale: sorted again from `allIds` when next asked. */
  reset(): void {
    this.sorted = undefined;
    this.pending = [];
  }

  /** An id left. */
  remove(id: string): void {
    if (this.sorted === undefined) return;
    const waiting = this.pending.indexOf(id);
    if (waiting >= 0) {
      this.pending.splice(waiting, 1);
      return;
    }
    const at = lowerBound(this.sorted, id);
    if (this.sorted[at] === id) this.sorted.splice(at, 1);
  }

  /**
   * Where each of `ids` sits in by-id order, counting every id the db holds
   * (the batch's own new ones included), ascending. CouchDB compares ids as
   * raw bytes; for the ASCII ids of the workloads that is JS string order.
   */
  ranks(ids: readonly string[]): number[] {
    const sorted = this.current();
    const ranks = ids.map((id) => lowerBound(sorted, id));
    return ranks.sort((a, b) => a - b);
  }

  /**
   * The leaves of `shape` that hold `ids`, ascending. One id touches one
   * leaf, and which one does not change what rewriting it costs, so a single
   * write needs no order (and builds none).
   */
  leavesOf(ids: readonly string[], shape: BtreeShape): readonly number[] {
    if (ids.length === 1) return ONE_LEAF;
    return this.ranks(ids).map((rank) => leafIndexOf(shape, rank));
  }

  private current(): string[] {
    if (this.sorted === undefined) {
      this.sorted = [...this.allIds()].sort(byCodeUnits);
      this.pending = [];
    } else if (this.pending.length > 0) {
      this.sorted = mergeSorted(this.sorted, this.pending.sort(byCodeUnits));
      this.pending = [];
    }
    return this.sorted;
  }
}

const ONE_LEAF: readonly number[] = [0];

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function lowerBound(sorted: readonly string[], id: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < id) low = mid + 1;
    else high = mid;
  }
  return low;
}

function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  const merged = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) merged[k++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) merged[k++] = a[i++]!;
  while (j < b.length) merged[k++] = b[j++]!;
  return merged;
}
