/**
 * What a document body takes in a db file, compressed as CouchDB's
 * couch_compress writes it (`[couchdb] file_compression`, default snappy).
 *
 * CouchDB compresses the Erlang term of the body; the model compresses its
 * JSON, which holds the same text (the per-entry overhead fitted in
 * storage-model.ts absorbs the framing). It matters: a body of repeated
 * characters, such as the benches' padding, costs CouchDB a few dozen bytes
 * where its JSON is hundreds, while random text costs its full size
 * (measured on CouchDB 3.4.3, docs/benchmarks.md "Compressed bodies").
 */
import * as t from "io-ts";
import { deflateSync } from "node:zlib";
import { compress as snappyCompress } from "snappyjs";

/** CouchDB's accepted values of `[couchdb] file_compression`. */
export const FileCompressionCodec = t.keyof(
  {
    none: null,
    snappy: null,
    deflate_1: null,
    deflate_2: null,
    deflate_3: null,
    deflate_4: null,
    deflate_5: null,
    deflate_6: null,
    deflate_7: null,
    deflate_8: null,
    deflate_9: null,
  },
  "none, snappy or deflate_1 to deflate_9",
);

export type FileCompression = t.TypeOf<typeof FileCompressionCodec>;

/** couch_compress marks a snappy binary with one byte. */
const SNAPPY_PREFIX_BYTES = 1;
/** `term_to_binary(T, [{compressed, N}])`: version and tag bytes, the uncompressed size (4), then zlib's stream. */
const DEFLATE_TERM_HEADER_BYTES = 6;

/** Bytes a body whose JSON is `json` takes in the file under `compression`. */
export function storedBodyBytes(json: string, compression: FileCompression): number {
  if (compression === "none") return Buffer.byteLength(json, "utf8");
  const raw = Buffer.from(json, "utf8");
  if (compression === "snappy") return SNAPPY_PREFIX_BYTES + snappyCompress(raw).length;
  // Erlang keeps the plain term when compressing would not make it smaller.
  const level = Number(compression.slice("deflate_".length));
  return Math.min(raw.length, DEFLATE_TERM_HEADER_BYTES + deflateSync(raw, { level }).length);
}
