/**
 * From decoded CouchDB bodies to the store port's types, and the path
 * encodings. Where a server omits a size (PouchDB Server), what we use instead
 * is stated here and in docs/couchdb.md.
 */
import type { DbInfo, ViewIndexInfo } from "../../ports/store.js";
import type * as t from "io-ts";
import type { DbInfoBody, ViewIndexBody } from "./decoders.js";
import { CouchDecodeError } from "./errors.js";
import { seqNumber, seqString } from "./seq.js";

/** CouchDB 3.x writes disk format 8; older files are upgraded by compaction (smoosh's upgrade channels). */
export const currentDiskFormatVersion = 8;

/** `fx_db` -> `fx_db`, `a/b` -> `a%2Fb` (CouchDB wants slashes in db names encoded). */
export const dbPath = (db: string): string => `/${encodeURIComponent(db)}`;

/** `_design/x y` -> `_design/x%20y` (the prefix slash stays literal). */
export const docPath = (id: string): string =>
  id.startsWith("_design/") ? `/_design/${encodeURIComponent(id.slice("_design/".length))}` : `/${encodeURIComponent(id)}`;

/** `_design/foo` -> `foo`, as `_compact/{ddoc}` wants it. */
export const ddocName = (id: string): string => (id.startsWith("_design/") ? id.slice("_design/".length) : id);

/**
 * PouchDB Server reports only `disk_size` (LevelDB bytes) and no live size. We
 * estimate the live share from the revisions written since the last compaction:
 * every update after the first write of a doc leaves one superseded revision
 * (garbage), so active = file * docs / (docs + garbage revs). Without a known
 * compacted seq, garbage = update_seq - docs (first writes are not garbage).
 * An estimate, so the ratio channel works there; exact sizes win when present.
 */
export const estimateActiveBytes = (fileBytes: number, docs: number, updateSeq: number, compactedSeq: number | undefined): number => {
  const garbage = compactedSeq === undefined ? Math.max(0, updateSeq - docs) : Math.max(0, updateSeq - compactedSeq);
  const live = Math.max(docs, 0);
  if (live + garbage === 0) return fileBytes;
  return Math.round((fileBytes * live) / (live + garbage));
};

export const toDbInfo = (db: string, body: DbInfoBody, keptCompactedSeq: number | undefined, endpoint: string): DbInfo => {
  const updateSeqNumber = seqNumber(body.update_seq);
  if (updateSeqNumber === undefined) {
    throw new CouchDecodeError(endpoint, [`update_seq: expected a seq with a numeric prefix, got ${JSON.stringify(body.update_seq)}`]);
  }
  // PouchDB Server sometimes leaves `disk_size` out (it measures its LevelDB
  // folder, and that can fail for a moment). Unknown sizes read as 0: priority
  // 0, so nothing starts on a guess, and the next check sees the real figure.
  const fileBytes = body.sizes?.file ?? body.disk_size ?? 0;
  const docCount = body.doc_count ?? 0;
  const docDelCount = body.doc_del_count ?? 0;
  // Shard-level info knows its compacted_seq; clustered info does not, so we use the one we kept.
  const compactedSeqNumber = body.compacted_seq !== undefined ? seqNumber(body.compacted_seq) : keptCompactedSeq;
  const activeBytes =
    body.sizes?.active ?? body.data_size ?? estimateActiveBytes(fileBytes, docCount + docDelCount, updateSeqNumber, compactedSeqNumber);
  return {
    db,
    fileBytes,
    activeBytes: Math.min(activeBytes, fileBytes),
    updateSeq: seqString(body.update_seq),
    updateSeqNumber,
    compactedSeqNumber,
    docCount,
    docDelCount,
    compactionRunning: body.compact_running ?? false,
    diskFormatVersion: body.disk_format_version,
    needsUpgrade: body.disk_format_version !== undefined && body.disk_format_version < currentDiskFormatVersion,
  };
};

/** Whether the server reports compaction progress in db info at all (PouchDB Server does not). */
export const reportsCompactRunning = (body: DbInfoBody): boolean => body.compact_running !== undefined;

export const toViewIndexInfo = (db: string, ddoc: string, v: t.TypeOf<typeof ViewIndexBody>): ViewIndexInfo => {
  const fileBytes = v.sizes?.file ?? v.disk_size ?? 0;
  const activeBytes = v.sizes?.active ?? v.data_size ?? fileBytes;
  return {
    db,
    ddoc,
    signature: v.signature,
    fileBytes,
    activeBytes: Math.min(activeBytes, fileBytes),
    updateSeqNumber: v.update_seq === undefined ? 0 : (seqNumber(v.update_seq) ?? 0),
    compactionRunning: v.compact_running ?? false,
    updaterRunning: v.updater_running ?? false,
    // More than one collator version: the index mixes ICU versions and an upgrade (compaction) rebuilds it.
    needsUpgrade: (v.collator_versions?.length ?? 1) > 1,
  };
};
