/**
 * The live bytes of the rows a view index commit adds. CouchDB compresses
 * each b-tree node whole (`[couchdb] file_compression`), so a row costs what
 * its leaf compresses to: numbers and ids that share prefixes shrink to a
 * third, random text not at all (docs/benchmarks.md, "Compressed rows").
 * Compressing every row would cost a build a share of its CPU, so each
 * writer chunk's first leaf of rows (`viewChunkBytes`) is compressed, as
 * CouchDB would compress that leaf, and its ratio stands for the chunk.
 */
import type { IndexRow } from "../../../core/views/index.js";
import { storedBodyBytes } from "../compression.js";
import { viewRowActiveBytes, type StorageModel } from "../storage-model.js";
import type { ChunkedRow } from "./commit-bytes.js";

/** A row the commit sizes: its JSON size and writer chunk in, its live bytes out. */
export interface SizedRow extends IndexRow, ChunkedRow {
  readonly externalBytes: number;
  activeBytes: number;
}

/**
 * Sets `activeBytes` on each of `adding` (in staging order, so by chunk) and
 * returns their sum. A row keeps what it was charged, so removing it later
 * takes back the same bytes.
 */
export function chargeAddedRows(model: StorageModel, adding: readonly SizedRow[]): number {
  let total = 0;
  let start = 0;
  while (start < adding.length) {
    const chunk = adding[start]!.chunk;
    const ratio = leafCompressionRatio(model, adding, start);
    let i = start;
    for (; i < adding.length && adding[i]!.chunk === chunk; i++) {
      const row = adding[i]!;
      row.activeBytes = viewRowActiveBytes(model, row.externalBytes, ratio);
      total += row.activeBytes;
    }
    start = i;
  }
  return total;
}

/** Stored bytes per byte of JSON of the first leaf's worth of rows of `rows[start]`'s chunk. */
export function leafCompressionRatio(model: StorageModel, rows: readonly SizedRow[], start: number): number {
  if (model.fileCompression === "none") return 1;
  const chunk = rows[start]!.chunk;
  const leaf: unknown[] = [];
  let bytes = 0;
  for (let i = start; i < rows.length && rows[i]!.chunk === chunk && bytes < model.viewChunkBytes; i++) {
    const row = rows[i]!;
    // A leaf's entry as couch_mrview keeps it: {{Key, DocId}, Value}.
    leaf.push([[row.key, row.id], row.value]);
    bytes += row.externalBytes + model.viewEntryTermBytes;
  }
  const json = JSON.stringify(leaf);
  return storedBodyBytes(json, model.fileCompression) / Buffer.byteLength(json, "utf8");
}
