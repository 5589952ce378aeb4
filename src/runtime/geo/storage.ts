/**
 * Where geo indexes are kept: files in a directory (they survive a
 * restart; see index-file.ts), or nowhere but memory (the embedded
 * default without a directory). Both report sizes the same way to the
 * compaction daemon: in memory, GeoIndex.sizes() models the file an
 * append-only log would be; on disk, the file's real size.
 */
import { GeoIndex } from "../../adapters/geo/index.js";
import type { DbName } from "../../ports/store.js";
import {
  appendBatch,
  dbDirOf,
  indexPathOf,
  listIndexFiles,
  loadIndexFile,
  logBatchText,
  readIndexFileHeader,
  removeDbDir,
  removeIndexFile,
  snapshotFileBytes,
  writeSnapshotFile,
  type LoadedIndex,
  type LogRecord,
} from "./index-file.js";
import type { GeoIndexState } from "./index-state.js";

export interface StoredFile {
  readonly signature: string;
  readonly fileBytes: number;
  readonly activeBytes: number;
  readonly updateSeq: number;
}

export interface GeoIndexStorage {
  /** True when indexes survive a restart. */
  readonly durable: boolean;
  /** The stored index, undefined when there is none; throws GeoSnapshotError when it is corrupt. */
  load(db: DbName, signature: string): Promise<LoadedIndex | undefined>;
  /** Rewrites the index as one snapshot (a compaction, the end of a first build). */
  saveSnapshot(state: GeoIndexState): Promise<void>;
  /** Appends one batch of changes, committed at the state's position. */
  append(state: GeoIndexState, records: readonly LogRecord[]): Promise<void>;
  fileBytes(state: GeoIndexState): number;
  activeBytes(state: GeoIndexState): number;
  /** What is stored for `db`, opened or not. */
  list(db: DbName): Promise<StoredFile[]>;
  remove(db: DbName, signature: string): Promise<void>;
  removeDb(db: DbName): Promise<void>;
}

/** Indexes in memory only: a restart rebuilds them. */
export const memoryStorage = (): GeoIndexStorage => ({
  durable: false,
  load: () => Promise.resolve(undefined),
  saveSnapshot: (state) => {
    state.index.compact();
    return Promise.resolve();
  },
  append: () => Promise.resolve(),
  fileBytes: (state) => state.index.sizes().fileBytes,
  activeBytes: (state) => state.index.sizes().dataBytes,
  list: () => Promise.resolve([]),
  remove: () => Promise.resolve(),
  removeDb: () => Promise.resolve(),
});

/** Bytes a file holds besides its snapshot: the magic, the header line, the newline. */
const HEADER_ESTIMATE_BYTES = 128;

/** Indexes as files under `root`: one directory per db, one file per signature. */
export const directoryStorage = (root: string): GeoIndexStorage => ({
  durable: true,
  load: (db, signature) => loadIndexFile(indexPathOf(root, db, signature), signature),
  saveSnapshot: (state) =>
    state.serialize(async () => {
      // Taken when its turn comes: it holds whatever was appended before it.
      state.index.compact();
      const bytes = snapshotFileBytes(state.signature, state.index, state.position);
      state.diskBytes = await writeSnapshotFile(indexPathOf(root, state.db, state.signature), dbDirOf(root, state.db), bytes);
      state.hasFile = true;
    }),
  append: (state, records) => {
    // The position is read now, with the records it commits: the chain may run it later.
    const text = logBatchText(records, state.position);
    return state.serialize(async () => {
      if (state.dropped) return;
      state.diskBytes += await appendBatch(indexPathOf(root, state.db, state.signature), text);
    });
  },
  fileBytes: (state) => state.diskBytes,
  activeBytes: (state) => Math.min(state.diskBytes, state.index.sizes().dataBytes + HEADER_ESTIMATE_BYTES),
  async list(db) {
    const files = await listIndexFiles(root, db);
    const out: StoredFile[] = [];
    for (const file of files) {
      const header = await readIndexFileHeader(indexPathOf(root, db, file.signature));
      out.push({ signature: file.signature, fileBytes: file.fileBytes, activeBytes: Math.min(file.fileBytes, (header?.snapshotBytes ?? 0) + HEADER_ESTIMATE_BYTES), updateSeq: header?.seqNumber ?? 0 });
    }
    return out;
  },
  remove: (db, signature) => removeIndexFile(indexPathOf(root, db, signature)),
  removeDb: (db) => removeDbDir(root, db),
});

/** A fresh index for a definition's dimensions. */
export const emptyIndex = (dimensions: 2 | 3 | 4 = 2): GeoIndex => new GeoIndex({ dimensions });
