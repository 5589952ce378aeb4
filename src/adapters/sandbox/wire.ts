/**
 * The batch format between the host and the guest (see guest-prelude.ts).
 *
 * In: one JSON document per line. Out: JSON chunks, each an array of
 * `[[part, ...], [log, ...]]` entries. The output was produced by code a user
 * can tamper with, so decoding checks every shape and turns anything odd into
 * a failure for that document, never an exception.
 */
import { SerializedDoc, type DocOutcome, type FunctionFailureKind, type FunctionOutcome, type IndexFunctionKind } from "../../ports/sandbox.js";

/** A line JSON.parse rejects, so the guest reports the document without running user code on it. */
const UNSERIALIZABLE_LINE = "!";

export interface EncodedBatch {
  readonly text: string;
  readonly count: number;
  readonly ids: readonly string[];
  /** Document index -> why it could not be sent. */
  readonly unserializable: ReadonlyMap<number, string>;
}

export const docId = (doc: unknown): string => {
  const id = typeof doc === "object" && doc !== null ? (doc as { _id?: unknown })._id : undefined;
  return typeof id === "string" ? id : "";
};

const encodeDoc = (doc: unknown): { line: string } | { error: string } => {
  try {
    const line = JSON.stringify(doc);
    return typeof line === "string" && line.startsWith("{") ? { line } : { error: "the document is not a JSON object" };
  } catch (error) {
    return { error: `the document is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
};

/** A batch whose documents all could be sent (nearly every one): shared, never written. */
const NONE_UNSERIALIZABLE: ReadonlyMap<number, string> = new Map();

/** Collects documents into batches of at most `maxDocs` documents or about `maxChars` characters. */
export class BatchBuilder {
  private lines: string[] = [];
  private ids: string[] = [];
  /** Made on the first document that cannot be sent (rare), not for every batch. */
  private unserializable: Map<number, string> | undefined;
  private chars = 0;

  constructor(
    private readonly maxDocs: number,
    private readonly maxChars: number,
  ) {}

  add(doc: unknown): void {
    if (doc instanceof SerializedDoc) return this.addLine(doc.json, doc.id);
    const encoded = encodeDoc(doc);
    if ("error" in encoded) (this.unserializable ??= new Map()).set(this.lines.length, encoded.error);
    this.addLine("line" in encoded ? encoded.line : UNSERIALIZABLE_LINE, docId(doc));
  }

  private addLine(line: string, id: string): void {
    this.lines.push(line);
    this.ids.push(id);
    this.chars += line.length + 1;
  }

  get full(): boolean {
    return this.lines.length >= this.maxDocs || this.chars >= this.maxChars;
  }

  get empty(): boolean {
    return this.lines.length === 0;
  }

  take(): EncodedBatch {
    const batch = { text: this.lines.join("\n"), count: this.lines.length, ids: this.ids, unserializable: this.unserializable ?? NONE_UNSERIALIZABLE };
    this.lines = [];
    this.ids = [];
    this.unserializable = undefined;
    this.chars = 0;
    return batch;
  }
}

export const failurePart = (kind: FunctionFailureKind, message: string): string => JSON.stringify({ k: kind, e: message });

/** A chunk for documents the guest never got to: every function failed the same way (compile failures stay). */
export const failedEntries = (count: number, functionCount: number, part: string, compileParts: ReadonlyMap<number, string>): string => {
  const parts = Array.from({ length: functionCount }, (_, f) => compileParts.get(f) ?? part).join(",");
  return `[${Array.from({ length: count }, () => `[[${parts}],[]]`).join(",")}]`;
};

const FAILURE_KINDS: ReadonlySet<string> = new Set(["exception", "timeout", "memory", "compile"]);

const malformed = (what: string): FunctionOutcome => ({ ok: false, kind: "exception", error: `the sandbox returned a malformed ${what}` });

const isRow = (row: unknown): boolean => Array.isArray(row) && row.length === 2;

const decodePart = (part: unknown, kind: IndexFunctionKind): FunctionOutcome => {
  if (Array.isArray(part)) {
    if (kind === "st_index") return { ok: true, geometries: part };
    return part.every(isRow) ? { ok: true, emits: part as [unknown, unknown][] } : malformed("row");
  }
  if (typeof part === "object" && part !== null) {
    const { k, e } = part as { k?: unknown; e?: unknown };
    if (typeof k === "string" && FAILURE_KINDS.has(k) && typeof e === "string") return { ok: false, kind: k as FunctionFailureKind, error: e };
  }
  return malformed("result");
};

const decodeEntry = (entry: unknown, kinds: readonly IndexFunctionKind[]): { results: FunctionOutcome[]; logs: string[] } => {
  const [parts, logs] = Array.isArray(entry) ? (entry as unknown[]) : [];
  const results = kinds.map((kind, f) => (Array.isArray(parts) ? decodePart(parts[f], kind) : malformed("document entry")));
  const lines = Array.isArray(logs) ? logs.filter((line): line is string => typeof line === "string") : [];
  return { results, logs: lines };
};

const parseChunk = (chunk: string): unknown[] => {
  try {
    const entries: unknown = JSON.parse(chunk);
    return Array.isArray(entries) ? entries : [];
  } catch {
    return [];
  }
};

/** Outcomes for `ids.length` documents; a document the chunks do not cover is a failure. */
export const decodeOutcomes = (chunks: readonly string[], kinds: readonly IndexFunctionKind[], batch: EncodedBatch): DocOutcome[] => {
  const entries = chunks.length === 1 ? parseChunk(chunks[0] ?? "") : chunks.flatMap(parseChunk);
  return batch.ids.map((id, index) => {
    const reason = batch.unserializable.get(index);
    if (reason !== undefined) return { id, results: kinds.map(() => ({ ok: false, kind: "exception", error: reason })), logs: [] };
    if (index >= entries.length) return { id, results: kinds.map(() => malformed("batch")), logs: [] };
    return { id, ...decodeEntry(entries[index], kinds) };
  });
};

export const failedOutcomes = (ids: readonly string[], kinds: readonly IndexFunctionKind[], kind: FunctionFailureKind, error: string): DocOutcome[] =>
  ids.map((id) => ({ id, results: kinds.map(() => ({ ok: false, kind, error })), logs: [] }));
