/**
 * CouchDB's `[chttpd] max_db_number_for_dbs_info_req` default: the most dbs
 * one `POST /_dbs_info` may name. The one place upholster writes it down:
 * the config's default, the CouchDB adapter's, the compaction core's check
 * batches and the db updates reconciliation's pacing all start from it.
 */
export const DEFAULT_DBS_PER_INFO_REQUEST = 100;
