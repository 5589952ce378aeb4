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
import { SnappyCompressor } from "snappyjs/snappy_compressor.js";

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
  if (compression === "snappy") return SNAPPY_PREFIX_BYTES + snappyBytes(json);
  const raw = Buffer.from(json, "utf8");
  // Erlang keeps the plain term when compressing would not make it smaller.
  const level = Number(compression.slice("deflate_".length));
  return Math.min(raw.length, DEFLATE_TERM_HEADER_BYTES + deflateSync(raw, { level }).length);
}

/**
 * The text and its compressed form go through two buffers kept between calls
 * (grown when a body needs more, up to `KEPT_BUFFER_MAX_BYTES`; a bigger body
 * gets buffers of its own): every write is sized, and allocating both per
 * call was about 40% of snappy's cost in a simulated write.
 */
const KEPT_BUFFER_MAX_BYTES = 1 << 20;
let keptInput = Buffer.alloc(4096);
let keptOutput = new Uint8Array(snappyBound(4096));

function snappyBound(bytes: number): number {
  return 32 + bytes + Math.ceil(bytes / 6);
}

function snappyBytes(json: string): number {
  const maxBytes = json.length * 3; // UTF-8 takes at most 3 bytes per UTF-16 unit
  let input = keptInput;
  let output = keptOutput;
  if (maxBytes > input.length) {
    input = Buffer.alloc(maxBytes);
    output = new Uint8Array(snappyBound(maxBytes));
    if (maxBytes <= KEPT_BUFFER_MAX_BYTES) {
      keptInput = input;
      keptOutput = output;
    }
  }
  const length = input.write(json, 0, "utf8");
  return new SnappyCompressor(input.subarray(0, length)).compressToBuffer(output);
}
