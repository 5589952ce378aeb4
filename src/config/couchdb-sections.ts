/**
 * CouchDB 3.4.3's own configuration sections and, for the sections upholster
 * reads too, CouchDB's keys there (from `rel/overlay/etc/default.ini` and
 * `local.ini`, commented-out entries included, and the keys its smoosh and
 * global_changes read in code). A CouchDB `local.ini` given to upholster
 * is then quiet: these are known, just not used here.
 */

/** Sections upholster does not read: any key is fine. */
export const COUCHDB_ONLY_SECTIONS: readonly string[] = [
  "attachments", "chttpd_auth_cache", "chttpd_auth_lockout", "cluster", "cors", "couch_httpd_auth",
  "couch_passwords_cache", "couch_peruser", "couch_quickjs_scanner_plugin", "couch_scanner",
  "couch_scanner_plugin_ddoc_features", "couch_scanner_plugin_find", "couch_scanner_plugin_find.regexes",
  "couch_scanner_plugins", "couchdb_engines", "csp", "custodian", "ddoc_cache", "disk_monitor", "dreyfus",
  "fabric", "feature_flags", "httpd", "httpd_design_handlers", "indexers", "ioq", "ioq.bypass", "jwt_auth", "jwt_keys",
  "ken", "ken.ignore", "log", "mango", "mem3", "native_query_servers", "nouveau", "off_heap_mqd", "process_priority",
  "prometheus", "purge", "query_server_config", "quickjs", "replicator", "replicator.shares", "reshard", "rexi",
  "ssl", "stats", "uuids", "vendor", "vhosts", "view_updater", "view_upgrade", "x_frame_options",
];

/** CouchDB's templated section names: `[cors:https://example.com]`, scanner plugins' skip lists. */
export const COUCHDB_SECTION_PATTERNS: readonly RegExp[] = [/^cors:/, /^couch_[a-z_]*scanner_plugin[a-z_]*\.skip_(dbs|ddocs?|docs)$/];

/**
 * CouchDB's keys in sections upholster reads as well, or will: while a
 * section is only CouchDB's it takes any key; once a subsystem decodes it,
 * its keys are the decoder's plus these (`[chttpd_auth]` is read by the
 * local authenticator, whose keys are all CouchDB's).
 */
export const COUCHDB_KEYS: Readonly<Record<string, readonly string[]>> = {
  couchdb: [
    "attachment_stream_buffer_size", "attachment_writer_timeout", "btree_chunk_size", "changes_doc_ids_optimization_threshold",
    "compaction_log_level", "database_dir", "default_engine", "default_security", "enable_database_recovery",
    "js_engine", "maintenance_mode", "max_attachment_size", "max_dbs_open", "max_document_id_length",
    "max_document_size", "max_partition_size", "os_process_timeout", "plugin_dir", "single_node",
    "stem_interactive_updates", "update_lru_on_read", "uri_file", "users_db_security_editable", "util_driver_dir",
    "uuid", "view_index_dir", "write_xxhash_checksums",
  ],
  smoosh: ["compaction_log_level"],
  global_changes: ["allowed_owner"],
  ken: ["batch_channels", "incremental_channels", "max_incremental_updates"],
  fabric: [
    "all_docs_concurrency", "all_docs_timeout", "attachments_timeout", "changes_duration", "nouveau_permsg_timeout",
    "nouveau_timeout", "partition_view_timeout", "request_timeout", "search_permsg_timeout", "search_timeout",
    "shard_timeout_factor", "shard_timeout_min_msec", "uuid_prefix_len", "view_permsg_timeout", "view_timeout",
  ],
  chttpd_auth: [
    "allow_persistent_cookies", "auth_cache_size", "authentication_db", "authentication_redirect", "cookie_domain",
    "hash_algorithms", "iterations", "max_iterations", "min_iterations", "password_regexp", "password_scheme",
    "pbkdf2_prf", "proxy_use_secret", "public_fields", "same_site", "secret", "timeout", "upgrade_hash_on_auth",
    "users_db_public",
  ],
};
