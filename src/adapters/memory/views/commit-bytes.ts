/**
 * What a view index commit rewrites besides its new rows, as CouchDB's view
 * updater writes it (couch_mrview_updater): the staged documents in chunks
 * of `viewWriterDocs` (`[view_updater] min_writer_items`, 100), each chunk
 * one b-tree update that rewrites the leaves it touched, whole, and the
 * inner nodes above them (storage-model.ts, `btreeRewriteBytes`):
 *
 * - in each view's tree of rows, the leaf a removed row sat in and the leaf
 *   an added row went to (from the merge's positions);
 * - in the id tree (doc id to the keys it emitted), the leaves of the ids
 *   whose rows changed.
 *
 * With keys in random order every chunk touches most leaves, so CouchDB's
 * view files grow several times faster than their new rows alone
 * (docs/benchmarks.md, "Leaves in bytes").
 */
import type { RowPositions } from "../../../core/views/index.js";
import { btreeRewriteBytes, leafIndexOf, sortLeaves, viewBtreeShape, viewIdBtreeShape, type StorageModel } from "../storage-model.js";
import type { SortedIds } from "../sorted-ids.js";

/** A row as the commit sees it: its writer chunk (set when staged). */
export interface ChunkedRow {
  readonly chunk: number;
}

/** One map function's part of a commit, and where its rows sat (from the merge). */
export interface RowChanges<Row extends ChunkedRow> {
  /** Its rows before and after the commit. */
  readonly rowsBefore: number;
  readonly rowsAfter: number;
  readonly adding: readonly Row[];
  readonly removing: ReadonlySet<Row>;
  readonly positions: RowPositions<Row>;
}

/** The group's rows on average, which sizes its leaves. */
export interface MeanRow {
  readonly externalBytes: number;
  /** What a row takes in a rewritten leaf (compressed). */
  readonly leafBytes: number;
}

/**
 * The leaves and inner nodes `changes` rewrote in the views' trees, chunk by
 * chunk, each chunk against the tree as the chunks before it left it (a
 * build's first chunks touch a small tree).
 */
export function rowTreesRewriteBytes<Row extends ChunkedRow>(model: StorageModel, changes: readonly RowChanges<Row>[], chunks: number, meanRow: MeanRow): number {
  const tree = viewBtreeShape(model, meanRow.externalBytes, meanRow.leafBytes);
  let bytes = 0;
  for (const { rowsBefore, rowsAfter, adding, removing, positions } of changes) {
    const entriesAt = (chunk: number): number => Math.max(1, Math.round(rowsBefore + ((rowsAfter - rowsBefore) * (chunk + 1)) / Math.max(1, chunks)));
    const leavesByChunk: number[][] = [];
    const writtenByChunk: number[] = [];
    const touch = (row: Row, written: number): void => {
      const scale = entriesAt(row.chunk) / Math.max(1, rowsAfter);
      (leavesByChunk[row.chunk] ??= []).push(leafIndexOf(tree, Math.floor((positions.get(row) ?? 0) * scale)));
      writtenByChunk[row.chunk] = (writtenByChunk[row.chunk] ?? 0) + written;
    };
    for (const row of removing) touch(row, 0);
    for (const row of adding) touch(row, 1);
    leavesByChunk.forEach((leaves, chunk) => {
      bytes += btreeRewriteBytes(tree, sortLeaves(leaves), writtenByChunk[chunk] ?? 0, entriesAt(chunk));
    });
  }
  return bytes;
}

/**
 * The id tree's leaves for the documents whose rows changed, chunk by chunk
 * (`idsByChunk[c]`), placed by their ranks among the group's ids (`order`,
 * of `entries` ids).
 */
export function idTreeRewriteBytes(model: StorageModel, idsByChunk: readonly (readonly string[] | undefined)[], order: SortedIds, entries: number): number {
  const tree = viewIdBtreeShape(model);
  let bytes = 0;
  for (const ids of idsByChunk) {
    if (ids === undefined || ids.length === 0) continue;
    bytes += btreeRewriteBytes(tree, order.leavesOf(ids, tree), ids.length, Math.max(1, entries));
  }
  return bytes;
}
