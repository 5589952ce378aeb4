/**
 * Store facts -> the core's facts. The store port speaks CouchDB (`sizes.file`,
 * opaque seqs); the core wants only what its priority rules read.
 */
import type { DbSizeInfo, GeoSizeInfo, ViewSizeInfo } from "../../core/compaction/index.js";
import type { GeoIndexFile } from "../../ports/geo.js";
import type { DbInfo, ViewIndexInfo } from "../../ports/store.js";

export const toDbSizeInfo = (info: DbInfo): DbSizeInfo => ({
  kind: "db",
  fileBytes: info.fileBytes,
  activeBytes: info.activeBytes,
  updateSeq: info.updateSeqNumber,
  compactedSeq: info.compactedSeqNumber,
  needsUpgrade: info.needsUpgrade,
  compactionRunning: info.compactionRunning,
});

export const toViewSizeInfo = (info: ViewIndexInfo): ViewSizeInfo => ({
  kind: "view",
  fileBytes: info.fileBytes,
  activeBytes: info.activeBytes,
  needsUpgrade: info.needsUpgrade,
  compactionRunning: info.compactionRunning,
});

export const toGeoSizeInfo = (file: GeoIndexFile): GeoSizeInfo => ({
  kind: "geo",
  fileBytes: file.fileBytes,
  activeBytes: file.activeBytes,
  updateSeq: file.updateSeq,
  compactionRunning: file.compactionRunning,
});
