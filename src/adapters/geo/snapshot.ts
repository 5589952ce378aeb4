/**
 * The snapshot format of a geo index: what it holds, not its trees (they
 * rebuild from it in well under a second per million entries). The seq it
 * reflects is the caller's to store next to it.
 *
 *   "UPHGEOIX"  magic (8 bytes)
 *   u32 version (1), u32 dimensions (2..4), u32 doc count
 *   per doc:    u32 length + UTF-8 id, u32 length + UTF-8 rev, u32 geometry count,
 *               per geometry: u8 tag, then
 *                 tag 1: a 2D point, f64 x, f64 y
 *                 tag 2: any geometry, u32 length + UTF-8 GeoJSON
 *   u32 CRC-32 of everything before it
 *
 * Little-endian. The same record layout sizes the append-only log model
 * (`dataBytes`, `fileBytes`). Reading checks everything (magic, version,
 * lengths, UTF-8, JSON, the geometry rules, duplicate ids, checksum,
 * trailing bytes) and throws `GeoSnapshotError`, never anything else.
 */
import * as zlib from "node:zlib";

export class GeoSnapshotError extends Error {
  constructor(reason: string) {
    super(`invalid geo index snapshot: ${reason}`);
    this.name = "GeoSnapshotError";
  }
}

const MAGIC = new TextEncoder().encode("UPHGEOIX");
export const SNAPSHOT_VERSION = 1;
export const TAG_POINT_2D = 1;
export const TAG_GEOJSON = 2;
/** Magic, version, dimensions, doc count, checksum. */
export const SNAPSHOT_OVERHEAD_BYTES = MAGIC.length + 4 * 3 + 4;
export const POINT_2D_BYTES = 1 + 16;

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

export const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8");

/** Bytes of a geometry record holding `json` (GeoJSON text). */
export const geoJsonRecordBytes = (json: string): number => 1 + 4 + utf8Length(json);

/** Bytes of a doc record besides its geometries. */
export const docHeaderBytes = (id: string, rev: string): number => 4 + utf8Length(id) + 4 + utf8Length(rev) + 4;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (zlib's when this Node has it, >= 20.15). */
function crc32(bytes: Uint8Array): number {
  const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
  if (native !== undefined) return native(bytes) >>> 0;
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export class SnapshotWriter {
  private bytes = new Uint8Array(1 << 16);
  private view = new DataView(this.bytes.buffer);
  private length = 0;

  constructor(dimensions: number, docCount: number) {
    this.raw(MAGIC);
    this.u32(SNAPSHOT_VERSION);
    this.u32(dimensions);
    this.u32(docCount);
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.length + extra, this.bytes.length * 2));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  private raw(data: Uint8Array): void {
    this.reserve(data.length);
    this.bytes.set(data, this.length);
    this.length += data.length;
  }

  u8(value: number): void {
    this.reserve(1);
    this.view.setUint8(this.length, value);
    this.length += 1;
  }

  u32(value: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, value, true);
    this.length += 4;
  }

  f64(value: number): void {
    this.reserve(8);
    this.view.setFloat64(this.length, value, true);
    this.length += 8;
  }

  text(value: string): void {
    const data = encoder.encode(value);
    this.u32(data.length);
    this.raw(data);
  }

  finish(): Uint8Array {
    const checksum = crc32(this.bytes.subarray(0, this.length));
    this.u32(checksum);
    return this.bytes.slice(0, this.length);
  }
}

export class SnapshotReader {
  private readonly view: DataView;
  private offset = 0;
  readonly dimensions: number;
  readonly docCount: number;

  constructor(private readonly bytes: Uint8Array) {
    if (!(bytes instanceof Uint8Array)) throw new GeoSnapshotError("not bytes");
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.length < SNAPSHOT_OVERHEAD_BYTES) throw new GeoSnapshotError("too short");
    if (!MAGIC.every((b, i) => bytes[i] === b)) throw new GeoSnapshotError("bad magic");
    const body = bytes.subarray(0, bytes.length - 4);
    const stored = this.view.getUint32(bytes.length - 4, true);
    if (crc32(body) !== stored) throw new GeoSnapshotError("checksum mismatch");
    this.offset = MAGIC.length;
    const version = this.u32();
    if (version !== SNAPSHOT_VERSION) throw new GeoSnapshotError(`unsupported version ${version}`);
    this.dimensions = this.u32();
    if (this.dimensions < 2 || this.dimensions > 4) throw new GeoSnapshotError(`bad dimensions ${this.dimensions}`);
    this.docCount = this.u32();
  }

  private need(size: number): void {
    if (this.offset + size > this.bytes.length - 4) throw new GeoSnapshotError("truncated");
  }

  u8(): number {
    this.need(1);
    return this.view.getUint8(this.offset++);
  }

  u32(): number {
    this.need(4);
    const value = this.view.getUint32(this.offset, true);
    this.offset += 4;
    return value;
  }

  f64(): number {
    this.need(8);
    const value = this.view.getFloat64(this.offset, true);
    this.offset += 8;
    return value;
  }

  text(): string {
    const length = this.u32();
    this.need(length);
    const data = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    try {
      return strictDecoder.decode(data);
    } catch {
      throw new GeoSnapshotError("invalid UTF-8");
    }
  }

  /** Every byte before the checksum was read. */
  assertAtEnd(): void {
    if (this.offset !== this.bytes.length - 4) throw new GeoSnapshotError("trailing bytes");
  }
}
