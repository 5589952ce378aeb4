/**
 * snappyjs 0.7's compressor module (no typings of its own): compressing into
 * a buffer the caller keeps, which `compress` does not offer (it allocates
 * the worst case and copies the result out on every call).
 */
declare module "snappyjs/snappy_compressor.js" {
  export class SnappyCompressor {
    constructor(uncompressed: Uint8Array);
    /** 32 + n + n/6: the most the compressed form can take. */
    maxCompressedLength(): number;
    /** Writes the compressed form to `outBuffer` (at least `maxCompressedLength()` long); returns its length. */
    compressToBuffer(outBuffer: Uint8Array): number;
  }
}
