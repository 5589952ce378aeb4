/**
 * One geo index's file: a snapshot (GeoIndex.snapshot()) and the seq it
 * reflects, then an append-only log of the documents changed since, each
 * batch closed by a commit line with its seq:
 *
 *   upholster-geo 1\n
 *   {"signature","seq","seqNumber","snapshotBytes"}\n
 *   <snapshotBytes bytes>\n
 *   {"u":id,"r":rev,"g":[geometries]}\n | {"d":id}\n  ... {"c":seq,"n":seqNumber}\n
 *
 * Why a log and not a snapshot per update: a snapshot costs the whole
 * index, a log line only the changed document; the file grows like a
 * CouchDB file (garbage until compacted), which is what the compaction
 * daemon watches. A compaction (and the end of a first build) rewrites
 * the file as a snapshot, atomically (temp file + rename).
 *
 * Reading: anything wrong with the header or the snapshot is a
 * GeoSnapshotError (the caller rebuilds). A torn last batch (a crash mid
 * append) is dropped: the index restarts from the last commit and reads
 * those changes again.
 */
import { appendFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { GeoIndex, GeoSnapshotError } from "../../adapters/geo/index.js";

const MAGIC_LINE = "upholster-geo 1\n";
export const FILE_SUFFIX = ".geo";

/** One document's change, as logged. */
export type LogRecord =
  | { readonly u: string; readonly r: string; readonly g: readonly unknown[] }
  | { readonly d: string };

export interface IndexPosition {
  /** Opaque seq, passed back to the store's changes feed as `since`. */
  readonly seq: string;
  readonly seqNumber: number;
}

export interface LoadedIndex extends IndexPosition {
  readonly index: GeoIndex;
  readonly fileBytes: number;
  /** The last batch was torn: rewrite the file before appending to it. */
  readonly tornTail: boolean;
}

interface Header extends IndexPosition {
  readonly signature: string;
  readonly snapshotBytes: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Dbs may hold `/` and other characters a path cannot: one directory per db, its name encoded. */
export const dbDirOf = (root: string, db: string): string => join(root, encodeURIComponent(db));
export const indexPathOf = (root: string, db: string, signature: string): string => join(dbDirOf(root, db), `${signature}${FILE_SUFFIX}`);

/** The file's bytes for a snapshot of `index` at `position`. */
export function snapshotFileBytes(signature: string, index: GeoIndex, position: IndexPosition): Uint8Array {
  const snapshot = index.snapshot();
  const header: Header = { signature, seq: position.seq, seqNumber: position.seqNumber, snapshotBytes: snapshot.length };
  const head = encoder.encode(`${MAGIC_LINE}${JSON.stringify(header)}\n`);
  const out = new Uint8Array(head.length + snapshot.length + 1);
  out.set(head, 0);
  out.set(snapshot, head.length);
  out[out.length - 1] = 0x0a;
  return out;
}

/** One batch of the log: its records and the commit line. */
export const logBatchText = (records: readonly LogRecord[], position: IndexPosition): string =>
  `${records.map((record) => JSON.stringify(record)).join("\n")}${records.length > 0 ? "\n" : ""}${JSON.stringify({ c: position.seq, n: position.seqNumber })}\n`;

/** Writes the whole file atomically; returns its size. */
export async function writeSnapshotFile(path: string, dir: string, bytes: Uint8Array): Promise<number> {
  await mkdir(dir, { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, bytes);
  await rename(temp, path);
  return bytes.length;
}

/** Appends a batch; returns the bytes appended. */
export async function appendBatch(path: string, text: string): Promise<number> {
  const bytes = encoder.encode(text);
  await appendFile(path, bytes);
  return bytes.length;
}

/** undefined when there is no file; throws GeoSnapshotError when it is not a geo index file of `signature`. */
export async function loadIndexFile(path: string, signature: string): Promise<LoadedIndex | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return parseIndexFile(bytes, signature);
}

export function parseIndexFile(bytes: Uint8Array, signature: string): LoadedIndex {
  const header = readHeader(bytes);
  if (header.value.signature !== signature) throw new GeoSnapshotError(`the file is of signature ${JSON.stringify(header.value.signature)}, not ${signature}`);
  const snapshotEnd = header.end + header.value.snapshotBytes;
  if (snapshotEnd + 1 > bytes.length || bytes[snapshotEnd] !== 0x0a) throw new GeoSnapshotError("the snapshot is cut short");
  const index = GeoIndex.restore(bytes.subarray(header.end, snapshotEnd));
  const replayed = replayLog(index, bytes.subarray(snapshotEnd + 1), header.value);
  return { index, ...replayed.position, fileBytes: bytes.length, tornTail: replayed.torn };
}

/** The header of a file, read without the rest (for files no design doc opened yet). */
export async function readIndexFileHeader(path: string): Promise<(IndexPosition & { readonly fileBytes: number; readonly snapshotBytes: number }) | undefined> {
  try {
    const bytes = await readFile(path);
    const header = readHeader(bytes);
    return { seq: header.value.seq, seqNumber: header.value.seqNumber, snapshotBytes: header.value.snapshotBytes, fileBytes: bytes.length };
  } catch {
    return undefined;
  }
}

/** The signatures of the files kept for `db`. */
export async function listIndexFiles(root: string, db: string): Promise<{ readonly signature: string; readonly fileBytes: number }[]> {
  let names: string[];
  try {
    names = await readdir(dbDirOf(root, db));
  } catch {
    return [];
  }
  const out: { signature: string; fileBytes: number }[] = [];
  for (const name of names.filter((n) => n.endsWith(FILE_SUFFIX)).sort()) {
    const info = await stat(join(dbDirOf(root, db), name)).catch(() => undefined);
    if (info !== undefined) out.push({ signature: name.slice(0, -FILE_SUFFIX.length), fileBytes: info.size });
  }
  return out;
}

export const removeIndexFile = (path: string): Promise<void> => rm(path, { force: true });
export const removeDbDir = (root: string, db: string): Promise<void> => rm(dbDirOf(root, db), { recursive: true, force: true });

function readHeader(bytes: Uint8Array): { readonly value: Header; readonly end: number } {
  const magic = encoder.encode(MAGIC_LINE);
  for (let i = 0; i < magic.length; i++) if (bytes[i] !== magic[i]) throw new GeoSnapshotError("not a geo index file (bad magic)");
  const lineEnd = bytes.indexOf(0x0a, magic.length);
  if (lineEnd < 0) throw new GeoSnapshotError("the header is cut short");
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(bytes.subarray(magic.length, lineEnd)));
  } catch {
    throw new GeoSnapshotError("the header is not JSON");
  }
  return { value: decodeHeader(raw), end: lineEnd + 1 };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const isSeqNumber = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

function decodeHeader(raw: unknown): Header {
  if (!isRecord(raw)) throw new GeoSnapshotError("the header is not an object");
  const { signature, seq, seqNumber, snapshotBytes } = raw;
  if (typeof signature !== "string") throw new GeoSnapshotError(`header signature = ${JSON.stringify(signature)}: expected a string`);
  if (typeof seq !== "string") throw new GeoSnapshotError(`header seq = ${JSON.stringify(seq)}: expected a string`);
  if (!isSeqNumber(seqNumber)) throw new GeoSnapshotError(`header seqNumber = ${JSON.stringify(seqNumber)}: expected a non-negative integer`);
  if (!isSeqNumber(snapshotBytes)) throw new GeoSnapshotError(`header snapshotBytes = ${JSON.stringify(snapshotBytes)}: expected a non-negative integer`);
  return { signature, seq, seqNumber, snapshotBytes };
}

/** Applies every committed batch; stops at the first line that does not parse (a torn tail). */
function replayLog(index: GeoIndex, log: Uint8Array, start: IndexPosition): { readonly position: IndexPosition; readonly torn: boolean } {
  let text: string;
  try {
    text = decoder.decode(log);
  } catch {
    return { position: start, torn: log.length > 0 };
  }
  const lines = text.split("\n");
  // The last element is "" after a final newline, else a line cut short.
  const complete = lines.slice(0, -1);
  let position = start;
  let pending: LogRecord[] = [];
  for (const line of complete) {
    const parsed = parseLine(line);
    if (parsed === undefined) return { position, torn: true };
    if ("c" in parsed) {
      for (const record of pending) applyRecord(index, record);
      pending = [];
      position = { seq: parsed.c, seqNumber: parsed.n };
    } else pending.push(parsed);
  }
  return { position, torn: pending.length > 0 || lines[lines.length - 1] !== "" };
}

function parseLine(line: string): LogRecord | { readonly c: string; readonly n: number } | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isRecord(raw)) return undefined;
  if (typeof raw["c"] === "string" && isSeqNumber(raw["n"])) return { c: raw["c"], n: raw["n"] };
  if (typeof raw["d"] === "string") return { d: raw["d"] };
  if (typeof raw["u"] === "string" && typeof raw["r"] === "string" && Array.isArray(raw["g"])) return { u: raw["u"], r: raw["r"], g: raw["g"] };
  return undefined;
}

function applyRecord(index: GeoIndex, record: LogRecord): void {
  if ("d" in record) {
    index.remove(record.d);
    return;
  }
  const applied = index.upsert(record.u, record.r, record.g);
  if (applied._tag === "Left") throw new GeoSnapshotError(`log record of doc ${JSON.stringify(record.u)}: ${applied.left}`);
}
