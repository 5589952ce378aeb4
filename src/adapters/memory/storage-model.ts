/**
 * Byte accounting of an append-only CouchDB-style file (couch_bt_engine).
 *
 * Every write appends the new document entry plus the b-tree nodes on the
 * path from the touched leaves to the root (both the by-id and the by-seq
 * tree), then its commit's header at the next 4 KiB block boundary
 * (`commitGrowthBytes`); nothing is overwritten, so updates and deletes leave the old entries
 * behind as garbage. `activeBytes` counts only what a compaction would copy:
 * the latest entry of every document (tombstones included, as CouchDB keeps
 * them). Compaction rewrites the live entries into a fresh file.
 *
 * Calibrated against CouchDB 3.4.3 (q=2 defaults, fixtures 21-26, 33-34,
 * 37-40, 46, 49-52 in test/fixtures/couchdb-3.4.3):
 *   empty db                                  file 16 700
 *   3000 docs of ~138 B, one bulk insert      file 799 142, active 776 942  (~259 B/doc live)
 *   + 5 rounds updating all (batches of 500)  file 8 364 454, active 1 865 526 (~73 B more per revision kept)
 *   + 1000 deletes                            file 8 925 612, active 1 795 962
 *   compaction                                file ~1.02 x active, ~1.1 s for 1.8 MB live, ~2.6 s for 15.6 MB live
 *   view index (one view, 24 001 docs)        ~39 B per row live, file ~1.0 x active after view compaction
 *
 * View indexes hold real rows (src/adapters/memory/views); their bytes are
 * calibrated against CouchDB 3.4.3 (test/fixtures/couchdb-3.4.3-views,
 * 123-129: q=1, two views, 3000 docs, rows of ~39 B of JSON):
 *   sizes.external = JSON bytes of key + value + doc id, summed      232 676 (the formula: 231 780)
 *   sizes.active   = ~0.72 x external there (snappy-compressed)      167 500 after the build
 *   file           after the build 185 939; +~97 000 per round that updated every doc:
 *                  rows that did not change (by_n's) are not written again, the others are
 *   view compaction                                                  file 168 140 = 1.02 x active
 * The model (views-sizes.test.ts): external -0.4%, active +3..6%, file after
 * the build -3%, after three rounds +29%.
 * One set of constants cannot fit both that index (compressible text) and
 * fx_big's above (small rows, active 1.34 x external): the model takes
 * `6 + 0.6 x external` per row, within ~35% of each.
 *
 * Commits, measured on CouchDB 3.4.3 (q=1, 2026-11-27; docs/benchmarks.md,
 * "A commit costs a block"): a one-document write grows the file by exactly
 * 4,096 B, whatever the document; bulk writes grow it by whole blocks
 * (172,032-262,144 B for 200 updates). The model had charged a single write
 * about 1,000 B. Batches of consecutive ids match CouchDB (508-564 B per
 * update there, 588-662 here). Batches of random ids append 2.3-3.5x as
 * much there, as CouchDB rewrites most leaves of both trees (cut at
 * `btree_chunk_size`, 1,279 B), so the model appends 1.5-3x less for
 * them: left for a model that knows the ids' ranks.
 *
 * Pure functions over a parameter record, so simulations can tune the model.
 */

export interface StorageModel {
  /** An empty db's file: headers and empty b-trees (CouchDB: ~8.3 KB per shard, q=2). */
  readonly headerBytes: number;
  /** Per document entry beyond its body: id, seq and rev-tree metadata in both b-trees. */
  readonly docOverheadBytes: number;
  /** Each revision kept in the rev tree (up to `revsLimit`) adds a stub. */
  readonly revisionStubBytes: number;
  /** CouchDB `_revs_limit`: revisions remembered per document (default 1000). */
  readonly revsLimit: number;
  /** Bytes of one b-tree node rewritten on an append (kp/kv node on the path to the root). */
  readonly btreeNodeBytes: number;
  /** Entries per b-tree node: the tree's depth is log_fanout(docs). */
  readonly btreeFanout: number;
  /** A freshly compacted file is `header + active * (1 + ratio)`: node slack. */
  readonly compactedOverheadRatio: number;
  /** Fixed cost of a compaction (open files, copy headers, swap): most of a small db's compaction. */
  readonly compactionStartupMs: number;
  /** Live bytes copied per ms by the compactor. */
  readonly compactionBytesPerMs: number;
  /** Writes during a compaction are caught up in extra passes; after this many it swaps regardless. */
  readonly maxCatchUpPasses: number;
  /** The on-disk format the store writes; older files report `needsUpgrade`. */
  readonly currentDiskFormatVersion: number;
  /** Live bytes of a view row beyond its share of the JSON (b-tree entry, back-index entry). */
  readonly viewRowOverheadBytes: number;
  /** Live bytes per byte of a row's JSON (key, value, doc id): CouchDB compresses b-tree nodes. */
  readonly viewRowActiveRatio: number;
  /** An empty view index file. */
  readonly viewHeaderBytes: number;
  /** A commit appends the rows it wrote, this many times their live bytes, plus the b-tree paths. */
  readonly viewAppendFactor: number;
  /** `_view_cleanup` deletes files: quick. */
  readonly cleanupDurationMs: number;
  /**
   * couch_file writes each commit's header at the start of a block of this
   * size, so a commit grows the file to the next block boundary plus the
   * header: a one-document write costs a whole block (measured: 4,096 B per
   * single write on CouchDB 3.4.3). 0: no padding.
   */
  readonly commitBlockBytes: number;
  /** The db header a commit writes after the padding. */
  readonly commitHeaderBytes: number;
}

export const defaultStorageModel: StorageModel = {
  headerBytes: 16_700,
  docOverheadBytes: 48,
  revisionStubBytes: 73,
  revsLimit: 1000,
  btreeNodeBytes: 90,
  btreeFanout: 40,
  compactedOverheadRatio: 0.02,
  compactionStartupMs: 800,
  compactionBytesPerMs: 9_000,
  maxCatchUpPasses: 10,
  currentDiskFormatVersion: 8,
  viewRowOverheadBytes: 6,
  viewRowActiveRatio: 0.6,
  viewHeaderBytes: 3_800,
  viewAppendFactor: 1,
  cleanupDurationMs: 50,
  commitBlockBytes: 4_096,
  // An empty shard's file is two header blocks and one header: 8,350 B = 2 x 4,096 + 158 (headerBytes, q=2).
  commitHeaderBytes: 158,
};

/** Bytes of a document's latest entry: body (none for a tombstone) + metadata + rev-tree stubs. */
export function docEntryBytes(model: StorageModel, bodyBytes: number, revisionCount: number): number {
  return bodyBytes + model.docOverheadBytes + model.revisionStubBytes * Math.min(revisionCount, model.revsLimit);
}

/** Levels of a b-tree holding `entries` entries (at least one: the root). */
export function btreeDepth(model: StorageModel, entries: number): number {
  if (entries <= model.btreeFanout) return 1;
  return Math.ceil(Math.log(entries) / Math.log(model.btreeFanout));
}

/**
 * Nodes rewritten by a batch of `batchSize` writes into trees of `entries`
 * entries: every touched leaf (at most one per write, at most every leaf)
 * plus the inner path, in two trees (by id and by seq). This is why single-doc
 * writes grow a file much faster than bulk writes.
 */
export function batchOverheadBytes(model: StorageModel, batchSize: number, entries: number): number {
  if (batchSize <= 0) return 0;
  const leaves = Math.max(1, Math.ceil(entries / model.btreeFanout));
  const touchedLeaves = Math.min(batchSize, leaves);
  const innerNodes = btreeDepth(model, entries) - 1;
  return 2 * model.btreeNodeBytes * (touchedLeaves + innerNodes);
}

/**
 * How much a commit of `dataBytes` (documents and b-tree nodes) grows a file
 * that ends at `fileBytes`: the data, then padding to the next block, then
 * the header there (couch_file's `write_header`).
 */
export function commitGrowthBytes(model: StorageModel, fileBytes: number, dataBytes: number): number {
  const block = model.commitBlockBytes;
  if (block <= 0) return dataBytes;
  return Math.ceil((fileBytes + dataBytes) / block) * block + model.commitHeaderBytes - fileBytes;
}

/** The file a compaction produces from `activeBytes` of live data. */
export function compactedFileBytes(model: StorageModel, activeBytes: number, headerBytes = model.headerBytes): number {
  return headerBytes + Math.ceil(activeBytes * (1 + model.compactedOverheadRatio));
}

/** How long copying `activeBytes` takes, the fixed startup cost included. */
export function compactionDurationMs(model: StorageModel, activeBytes: number): number {
  return model.compactionStartupMs + copyDurationMs(model, activeBytes);
}

/** Time to copy bytes (a catch-up pass): at least 1 ms so a pass is an observable step. */
export function copyDurationMs(model: StorageModel, bytes: number): number {
  return Math.max(1, Math.ceil(bytes / model.compactionBytesPerMs));
}

/** Live bytes of one view row whose key, value and doc id take `externalBytes` as JSON. */
export function viewRowActiveBytes(model: StorageModel, externalBytes: number): number {
  return Math.ceil(model.viewRowOverheadBytes + externalBytes * model.viewRowActiveRatio);
}

/**
 * Bytes a view index commit appends: the leaves with the rows it wrote
 * (`writtenActiveBytes` live), the leaves it removed rows from (their
 * entries' overhead), and the inner nodes up to the root, in an index of
 * `indexedRows`. Rows already live make up the leaves' bulk, which is why
 * the rows are counted and not whole nodes.
 */
export function viewCommitAppendBytes(model: StorageModel, writtenActiveBytes: number, removedRows: number, indexedRows: number): number {
  if (writtenActiveBytes <= 0 && removedRows <= 0) return 0;
  const innerNodes = btreeDepth(model, Math.max(1, indexedRows)) - 1;
  return Math.ceil(writtenActiveBytes * model.viewAppendFactor) + removedRows * model.viewRowOverheadBytes + 2 * model.btreeNodeBytes * (innerNodes + 1);
}
