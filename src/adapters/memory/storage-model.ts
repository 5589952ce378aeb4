/**
 * Byte accounting of an append-only CouchDB-style file (couch_bt_engine).
 *
 * Every write appends the new document entry plus the b-tree leaves it
 * touched and the inner nodes above them (both the by-id and the by-seq
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
 * A row lives at what its leaf compresses to (views/row-bytes.ts: each
 * writer chunk's first leaf of rows is compressed, and its ratio stands for
 * the chunk), times `viewRowActiveRatio`, plus `viewRowOverheadBytes` (its
 * share of the id tree). So 250 random letters cost a row their size and
 * small numeric rows about half (2026-11-27, docs/benchmarks.md
 * "Compressed rows").
 * That fixture's keys follow its ids. With random keys (measured
 * 2026-11-27, docs/benchmarks.md "Leaves in bytes") CouchDB's view files
 * grow 5-50x faster than a model of written rows alone: its view updater
 * writes in chunks of `min_writer_items` (100) documents, and each chunk
 * rewrites the leaves its rows leave and enter, in every view's tree and
 * in the id tree. The model does the same (views/commit-bytes.ts, leaves cut at
 * `viewChunkBytes` of rows, a row costing its compressed bytes there).
 * Model / CouchDB (views-sizes.test.ts and the throwaway fit scripts):
 *   the fixture: active 0.91x, file after the build 1.07x, after three rounds 1.17x
 *   live bytes built: small rows 0.82-0.84x, rows of 250 random letters 0.97x
 *   per update, small rows: 0.63x (1 doc), 0.93x (10), 1.13x (200 random ids), 0.73x (200 consecutive)
 *   per update, random-letter rows: 0.70x (1), 1.02x (10), 1.42-1.47x (200)
 *   builds 0.81-1.19x
 *
 * Commits, measured on CouchDB 3.4.3 (q=1, 2026-11-27; docs/benchmarks.md,
 * "A commit costs a block" and "Leaves in bytes"): a commit grows the file
 * to the next 4 KiB block, then its header, so a one-document write costs
 * 4,096 B, or 8,192 B once its data passes ~3,900 B (a 1,000 B document, a
 * 20,000-doc db's deeper trees, a long rev tree). Bulk writes cost the
 * leaves they touch: couch_btree rewrites a touched leaf whole (leaves are
 * cut at `btree_chunk_size`, 1,279 B), with every inner node above it, in
 * the by-id tree (the ids' leaves) and the by-seq tree (the leaves the old
 * seqs leave, and the tail). So locality decides: 200 updates among 20,000
 * docs append 532 B per update with consecutive ids and 1,836 B with random
 * ones. The model (`btreeRewriteBytes`, the ids' ranks from sorted-ids.ts)
 * lands within 0.93-1.10x of 13 of 14 such measurements, single writes and
 * batches of 10 to 1,000, consecutive and random ids (0.73x for single
 * writes of 600 B documents, see below).
 *
 * Bodies are stored compressed, as couch_compress writes them
 * (`fileCompression`, CouchDB's `file_compression`, snappy by default;
 * compression.ts): 250 repeated characters live in ~183 B a document on
 * CouchDB 3.4.3, 250 random letters in ~425 B. With compression the same
 * constants fit both kinds of body (2026-11-27, docs/benchmarks.md
 * "Compressed bodies": 21 shapes within 0.93-1.07x but two).
 * Not modelled: the spread of leaf sizes (CouchDB's single writes of 600 B
 * documents take a second block 37% of the time; the model's, never), and
 * leaves that compress because revisions repeat (CouchDB's rev ids do not
 * hash the doc id, so equal edits of different docs share one, and a leaf
 * of them shrinks: bench:churn's batches do that; the model's revs differ).
 *
 * Pure functions over a parameter record, so simulations can tune the model.
 */
import type { FileCompression } from "./compression.js";

export interface StorageModel {
  /** How bodies are compressed (`[couchdb] file_compression`; compression.ts). */
  readonly fileCompression: FileCompression;
  /** An empty db's file: headers and empty b-trees (CouchDB: ~8.3 KB per shard, q=2). */
  readonly headerBytes: number;
  /** Per document entry beyond its body: id, seq and rev-tree metadata in both b-trees. */
  readonly docOverheadBytes: number;
  /**
   * Each revision kept in the rev tree (up to `revsLimit`): the current
   * one, and past ones until the db is compacted (their leaf records still
   * hold a body pointer, a seq and sizes).
   */
  readonly revisionStubBytes: number;
  /**
   * A past revision once a compaction has copied the doc: the compactor
   * keeps only a stub of it. So a db's active size falls when it is
   * compacted, as CouchDB's does (the fixture db of 3,000 docs, 5 update
   * rounds and 1,000 deletes: 1,795,962 B active before, 1,374,353 B after,
   * 26 B less for each of its 16,000 past revisions).
   */
  readonly compactedRevisionStubBytes: number;
  /** CouchDB `_revs_limit`: revisions remembered per document (default 1000). */
  readonly revsLimit: number;
  /** Db files: entries in a leaf of the by-id and by-seq trees (CouchDB cuts leaves at `btree_chunk_size`, 1,279 B). */
  readonly btreeLeafEntries: number;
  /** Db files: bytes one entry takes in a rewritten leaf (compressed), what an untouched neighbour costs a commit. */
  readonly btreeEntryBytes: number;
  /** Children of an inner node (db and view trees). */
  readonly btreeInnerFanout: number;
  /** Bytes of one rewritten inner node (db and view trees). */
  readonly btreeInnerNodeBytes: number;
  /** A freshly compacted file is `header + active * (1 + ratio)`: node slack. */
  readonly compactedOverheadRatio: number;
  /**
   * Fixed cost of a compaction (open files, copy headers, swap). With the two
   * below, fitted to CouchDB 3.4.3 compacting q=1 dbs of 500-20,000 docs and
   * 0.25-33 MB live on the 2-core machine (docs/benchmarks.md, "How long a
   * compaction takes"): the time goes with the documents copied far more
   * than with their bytes.
   */
  readonly compactionStartupMs: number;
  /** Ms per document (a db) or row (a view index) the compactor copies. */
  readonly compactionMsPerEntry: number;
  /** Live bytes copied per ms by the compactor, beyond the per-entry cost. */
  readonly compactionBytesPerMs: number;
  /**
   * Fixed cost of a view index compaction. With the rate below, fitted to
   * CouchDB 3.4.3 compacting one-view indexes of 500-50,000 rows and
   * 0.01-2.4 MB live (docs/benchmarks.md, "How long a view compaction
   * takes"): couch_mrview_compactor copies b-tree entries, far cheaper than
   * a db's documents and revision trees, and its time went with the live
   * bytes (rows added nothing to the fit).
   */
  readonly viewCompactionStartupMs: number;
  /** Live bytes of a view index copied per ms by its compactor. */
  readonly viewCompactionBytesPerMs: number;
  /** Writes during a compaction are caught up in extra passes; after this many it swaps regardless. */
  readonly maxCatchUpPasses: number;
  /** The on-disk format the store writes; older files report `needsUpgrade`. */
  readonly currentDiskFormatVersion: number;
  /** Live bytes of a view row beyond its share of the JSON (b-tree entry, back-index entry). */
  readonly viewRowOverheadBytes: number;
  /** Live bytes per compressed byte of a row's JSON (key, value, doc id; the leaf's compression ratio applied). */
  readonly viewRowActiveRatio: number;
  /** An empty view index file. */
  readonly viewHeaderBytes: number;
  /** A commit appends the rows it wrote, this many times their live bytes, plus the leaves and inner nodes it rewrites. */
  readonly viewAppendFactor: number;
  /**
   * couch_mrview_updater writes a view's changes in chunks of this many
   * documents (`[view_updater] min_writer_items`, 100), each a b-tree
   * update of its own: a build rewrites the leaves many times over.
   */
  readonly viewWriterDocs: number;
  /** Bytes of rows in a view leaf (CouchDB's `btree_chunk_size`, 1,279), counted as JSON plus `viewEntryTermBytes` each. */
  readonly viewChunkBytes: number;
  /** A view row's bytes in a leaf beyond its JSON (the term's framing, the doc id's tuple). */
  readonly viewEntryTermBytes: number;
  /** Documents in a leaf of a view index's id tree. */
  readonly viewIdLeafEntries: number;
  /** Bytes one id-tree entry takes in a rewritten leaf. */
  readonly viewIdEntryBytes: number;
  /** Bytes of one rewritten inner node of a view index's trees. */
  readonly viewInnerNodeBytes: number;
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
  fileCompression: "snappy",
  headerBytes: 16_700,
  docOverheadBytes: 66,
  revisionStubBytes: 73,
  compactedRevisionStubBytes: 47,
  revsLimit: 1000,
  btreeLeafEntries: 10,
  btreeEntryBytes: 66,
  btreeInnerFanout: 20,
  btreeInnerNodeBytes: 230,
  compactedOverheadRatio: 0.02,
  compactionStartupMs: 46,
  compactionMsPerEntry: 0.088,
  compactionBytesPerMs: 150_000,
  viewCompactionStartupMs: 8,
  viewCompactionBytesPerMs: 3_500,
  maxCatchUpPasses: 10,
  currentDiskFormatVersion: 8,
  viewRowOverheadBytes: 13,
  viewRowActiveRatio: 1.07,
  viewHeaderBytes: 3_800,
  viewAppendFactor: 1,
  viewWriterDocs: 100,
  viewChunkBytes: 1_279,
  viewEntryTermBytes: 12,
  viewIdLeafEntries: 45,
  viewIdEntryBytes: 14,
  viewInnerNodeBytes: 50,
  cleanupDurationMs: 50,
  commitBlockBytes: 4_096,
  // An empty shard's file is two header blocks and one header: 8,350 B = 2 x 4,096 + 158 (headerBytes, q=2).
  commitHeaderBytes: 158,
};

/**
 * Bytes of a document's latest entry: body (none for a tombstone) +
 * metadata + its rev tree, of which `stubbedRevisions` past revisions were
 * made stubs by a compaction.
 */
export function docEntryBytes(model: StorageModel, bodyBytes: number, revisionCount: number, stubbedRevisions: number): number {
  return bodyBytes + model.docOverheadBytes + model.revisionStubBytes * Math.min(revisionCount, model.revsLimit) - stubSavingBytes(model, revisionCount, stubbedRevisions);
}

/** What a compaction's stubs of `stubbedRevisions` past revisions save in an entry of `revisionCount` revisions. */
export function stubSavingBytes(model: StorageModel, revisionCount: number, stubbedRevisions: number): number {
  const past = Math.max(0, Math.min(revisionCount, model.revsLimit) - 1);
  return (model.revisionStubBytes - model.compactedRevisionStubBytes) * Math.min(stubbedRevisions, past);
}

/** A b-tree as the model sees it: how many entries a leaf holds, and what rewriting a node costs. */
export interface BtreeShape {
  /** Entries in a leaf. */
  readonly leafEntries: number;
  /** Bytes one entry takes in a rewritten leaf. */
  readonly entryBytes: number;
  /** Children of an inner node. */
  readonly innerFanout: number;
  /** Bytes of one rewritten inner node. */
  readonly innerNodeBytes: number;
}

/** A db file's by-id and by-seq trees. */
export function dbBtreeShape(model: StorageModel): BtreeShape {
  return { leafEntries: model.btreeLeafEntries, entryBytes: model.btreeEntryBytes, innerFanout: model.btreeInnerFanout, innerNodeBytes: model.btreeInnerNodeBytes };
}

/**
 * A view's tree of rows: a leaf holds `viewChunkBytes` of rows (CouchDB cuts
 * leaves by bytes, so big rows make small leaves), a rewritten row costs its
 * compressed bytes (its live bytes less the overhead the id tree holds).
 */
export function viewBtreeShape(model: StorageModel, meanRowExternalBytes: number, meanRowLeafBytes: number): BtreeShape {
  return {
    leafEntries: Math.max(1, Math.floor(model.viewChunkBytes / (meanRowExternalBytes + model.viewEntryTermBytes))),
    entryBytes: Math.round(meanRowLeafBytes),
    innerFanout: model.btreeInnerFanout,
    innerNodeBytes: model.viewInnerNodeBytes,
  };
}

/** A view index's id tree (doc id to the keys it emitted). */
export function viewIdBtreeShape(model: StorageModel): BtreeShape {
  return { leafEntries: model.viewIdLeafEntries, entryBytes: model.viewIdEntryBytes, innerFanout: model.btreeInnerFanout, innerNodeBytes: model.viewInnerNodeBytes };
}

/** The leaf of a b-tree that holds the entry at `position` in key order. */
export function leafIndexOf(shape: BtreeShape, position: number): number {
  return Math.floor(position / shape.leafEntries);
}

/**
 * Bytes a commit rewrites in one b-tree of `entries` entries, having written
 * `writtenEntries` entries into the leaves `leaves` (ascending; repeats are
 * one leaf). couch_btree rewrites each touched leaf whole, so the entries
 * it did not change are copied along (the written ones are counted with
 * their documents or rows), and every inner node above a touched leaf, up
 * to the root. Random keys spread a batch over most leaves; consecutive
 * keys fill few, which is why locality decides a batch's cost.
 */
export function btreeRewriteBytes(shape: BtreeShape, leaves: readonly number[], writtenEntries: number, entries: number): number {
  if (leaves.length === 0) return 0;
  const neighbours = Math.max(0, distinctAbove(leaves, 1) * shape.leafEntries - writtenEntries);
  // Level by level up to the root: the nodes above the touched leaves (no arrays: this runs for every write).
  let innerNodes = 0;
  let divisor = 1;
  for (let levelNodes = Math.ceil(entries / shape.leafEntries); levelNodes > 1; levelNodes = Math.ceil(levelNodes / shape.innerFanout)) {
    divisor *= shape.innerFanout;
    innerNodes += distinctAbove(leaves, divisor);
  }
  return neighbours * shape.entryBytes + innerNodes * shape.innerNodeBytes;
}

/** Leaves in the order `btreeRewriteBytes` takes them (in place; one leaf needs no sort). */
export function sortLeaves(leaves: number[]): number[] {
  if (leaves.length > 1) leaves.sort((a, b) => a - b);
  return leaves;
}

/** Distinct values of `floor(leaf / divisor)` over ascending `leaves`: the nodes `divisor` leaves wide that hold them. */
function distinctAbove(leaves: readonly number[], divisor: number): number {
  let count = 0;
  let last = -1;
  for (const leaf of leaves) {
    const node = Math.floor(leaf / divisor);
    if (node !== last) {
      count++;
      last = node;
    }
  }
  return count;
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

/** What a compactor's time is made of: a fixed start, a cost per entry copied, and a copy rate for the live bytes. */
export interface CompactionCost {
  readonly startupMs: number;
  readonly msPerEntry: number;
  readonly bytesPerMs: number;
}

/** A db compaction copies documents (and tombstones) with their revision trees. */
export function dbCompactionCost(model: StorageModel): CompactionCost {
  return { startupMs: model.compactionStartupMs, msPerEntry: model.compactionMsPerEntry, bytesPerMs: model.compactionBytesPerMs };
}

/** A view index compaction copies b-tree entries: its time goes with the live bytes. */
export function viewCompactionCost(model: StorageModel): CompactionCost {
  return { startupMs: model.viewCompactionStartupMs, msPerEntry: 0, bytesPerMs: model.viewCompactionBytesPerMs };
}

/** How long copying `entries` documents (or rows) of `activeBytes` takes, the fixed startup cost included. */
export function compactionDurationMs(cost: CompactionCost, activeBytes: number, entries: number): number {
  return cost.startupMs + Math.ceil(entries * cost.msPerEntry) + copyDurationMs(cost, activeBytes);
}

/** Time to copy bytes (a catch-up pass): at least 1 ms so a pass is an observable step. */
export function copyDurationMs(cost: CompactionCost, bytes: number): number {
  return Math.max(1, Math.ceil(bytes / cost.bytesPerMs));
}

/**
 * Live bytes of one view row whose key, value and doc id take `externalBytes`
 * as JSON, in a leaf that compresses to `compressionRatio` of its JSON
 * (views/row-bytes.ts).
 */
export function viewRowActiveBytes(model: StorageModel, externalBytes: number, compressionRatio: number): number {
  return Math.ceil(model.viewRowOverheadBytes + externalBytes * compressionRatio * model.viewRowActiveRatio);
}
