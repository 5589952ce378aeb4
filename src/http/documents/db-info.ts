/**
 * `GET /{db}` in CouchDB 3.4's clustered shape and member order (fixture
 * 05): one node, so `cluster` is q=1, n=1, w=1, r=1; `props` is empty (no
 * partitioned dbs).
 */
import type { DocumentDbInfo } from "./document-api.js";

export function dbInfoBody(info: DocumentDbInfo): object {
  return {
    instance_start_time: info.instanceStartTime,
    db_name: info.db,
    purge_seq: info.purgeSeq,
    update_seq: info.updateSeq,
    sizes: { file: info.fileBytes, external: info.externalBytes, active: info.activeBytes },
    props: {},
    doc_del_count: info.docDelCount,
    doc_count: info.docCount,
    disk_format_version: info.diskFormatVersion,
    compact_running: info.compactionRunning,
    cluster: { q: 1, n: 1, w: 1, r: 1 },
  };
}
