/**
 * io-ts codecs for every CouchDB / PouchDB Server response the adapter reads.
 * They are the single source of truth for the shapes: a field CouchDB (or
 * PouchDB Server) may omit is optional; extra fields are ignored. A body of
 * the wrong shape becomes a `CouchDecodeError` naming the endpoint and the
 * field path, never a crash.
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import { CouchDecodeError } from "./errors.js";

const optional = <C extends t.Props>(props: C) => t.partial(props);
const both = <R extends t.Props, O extends t.Props>(required: R, opt: O, name: string) =>
  t.intersection([t.type(required), optional(opt)], name);

/** Seqs: opaque strings in clusters, integers on shards, CouchDB 1.x and PouchDB Server. */
export const Seq = t.union([t.string, t.number], "Seq");

const NonNegative = t.refinement(t.number, (n) => Number.isFinite(n) && n >= 0, "NonNegativeNumber");

export const Sizes = optional({ file: NonNegative, active: NonNegative, external: NonNegative });

/** `GET /` */
export const RootInfo = optional({
  couchdb: t.string,
  version: t.string,
  vendor: optional({ name: t.string, version: t.string }),
  features: t.array(t.string),
  uuid: t.string,
  "express-pouchdb": t.string,
});
export type RootInfo = t.TypeOf<typeof RootInfo>;

/**
 * `GET /{db}` (clustered), `GET /_node/_local/<shard>` (shard), CouchDB 1.x and
 * PouchDB Server. Only `db_name` and `update_seq` are required everywhere:
 * PouchDB Server has `disk_size` and no `sizes`, shards add `compacted_seq`.
 */
export const DbInfoBody = both(
  { db_name: t.string, update_seq: Seq },
  {
    sizes: Sizes,
    disk_size: NonNegative,
    data_size: NonNegative,
    doc_count: NonNegative,
    doc_del_count: NonNegative,
    compact_running: t.boolean,
    disk_format_version: t.number,
    compacted_seq: Seq,
    purge_seq: Seq,
    instance_start_time: t.string,
    cluster: optional({ q: t.number, n: t.number }),
  },
  "DbInfo",
);
export type DbInfoBody = t.TypeOf<typeof DbInfoBody>;

/** `POST /_dbs_info`: one entry per key, in order; a missing db is `{key, error}` in a 200. */
export const DbsInfoBody = t.array(
  t.union([t.type({ key: t.string, info: DbInfoBody }), both({ key: t.string, error: t.string }, { reason: t.string }, "DbsInfoError")]),
  "DbsInfo",
);

/** `GET /_all_dbs`, `GET /_node/_local/_all_dbs` */
export const DbNames = t.array(t.string, "DbNames");

/** `GET /_membership` */
export const Membership = both({ all_nodes: t.array(t.string), cluster_nodes: t.array(t.string) }, {}, "Membership");

/** `GET /_session`, `POST /_session` */
export const Session = optional({
  ok: t.boolean,
  name: t.union([t.string, t.null]),
  roles: t.array(t.string),
  userCtx: optional({ name: t.union([t.string, t.null]), roles: t.array(t.string) }),
});

/** Error bodies: `{error, reason}`; reason is sometimes not a string in odd servers. */
export const ErrorBody = both({ error: t.string }, { reason: t.unknown }, "ErrorBody");

/** `GET /{db}/_design/{ddoc}/_info`. PouchDB Server answers `{view_index: "Not implemented."}`. */
export const ViewIndexBody = both(
  { signature: t.string },
  {
    sizes: Sizes,
    disk_size: NonNegative,
    data_size: NonNegative,
    update_seq: Seq,
    purge_seq: Seq,
    compact_running: t.boolean,
    updater_running: t.boolean,
    waiting_clients: t.number,
    language: t.string,
    collator_versions: t.array(t.string),
    updates_pending: optional({ minimum: t.number, preferred: t.number, total: t.number }),
  },
  "ViewIndex",
);
export const ViewInfoBody = both({ view_index: t.union([ViewIndexBody, t.string]) }, { name: t.string }, "ViewInfo");

/** `GET /_active_tasks`: a task type we do not know is kept as `other`. */
export const ActiveTask = both(
  { type: t.string },
  {
    node: t.string,
    pid: t.string,
    database: t.string,
    design_document: t.union([t.string, t.null]),
    phase: t.string,
    progress: t.number,
    changes_done: t.number,
    total_changes: t.number,
    started_on: t.number,
    updated_on: t.number,
  },
  "ActiveTask",
);
export type ActiveTask = t.TypeOf<typeof ActiveTask>;
export const ActiveTasks = t.array(ActiveTask, "ActiveTasks");

/** A document: `_id` and `_rev` required, the rest kept as is. */
export const StoredDocBody = t.intersection(
  [t.type({ _id: t.string, _rev: t.string }), optional({ _deleted: t.boolean }), t.UnknownRecord],
  "Doc",
);

/** `GET /{db}/_design_docs?include_docs=true` and `_all_docs` with a `_design/` key range. */
export const DesignDocsBody = both(
  {
    rows: t.array(
      both({ id: t.string, value: t.type({ rev: t.string }) }, { doc: t.union([StoredDocBody, t.null]) }, "DesignDocRow"),
    ),
  },
  { total_rows: t.number, offset: t.union([t.number, t.null]) },
  "DesignDocs",
);

/** `GET /{db}/_changes` (normal feed). */
export const ChangesBody = both(
  {
    results: t.array(
      both({ id: t.string, seq: Seq, changes: t.array(t.type({ rev: t.string })) }, { deleted: t.boolean, doc: t.union([StoredDocBody, t.null]) }, "ChangeRow"),
    ),
    last_seq: Seq,
  },
  { pending: t.number },
  "Changes",
);

/** A written doc: `PUT /{db}/{id}` answer and a `_bulk_docs` success row. */
export const DocWritten = both({ id: t.string, rev: t.string }, { ok: t.boolean }, "DocWritten");

/** `POST /{db}/_bulk_docs` */
export const BulkDocsBody = t.array(
  t.union([
    DocWritten,
    both({ id: t.string, error: t.string }, { reason: t.string }, "BulkError"),
  ]),
  "BulkDocs",
);

/** 2xx `{ok: true}` of `_compact`, `_view_cleanup`, `PUT /{db}`. */
export const OkBody = optional({ ok: t.boolean });

/** One line of `GET /_db_updates?feed=continuous`: a row or the closing `{last_seq}`. */
export const DbUpdateRow = t.type({ db_name: t.string, type: t.string, seq: Seq }, "DbUpdateRow");
export type DbUpdateRow = t.TypeOf<typeof DbUpdateRow>;
export const DbUpdatesLine = t.union([DbUpdateRow, t.type({ last_seq: Seq }, "LastSeq")], "DbUpdatesLine");
/** `GET /_db_updates` (normal, longpoll). */
export const DbUpdatesBody = t.type({ results: t.array(DbUpdateRow), last_seq: Seq }, "DbUpdates");

/** Field path and offending value of each problem: `sizes.file: expected NonNegativeNumber, got "x"`. */
export const describeErrors = (errors: t.Errors): string[] =>
  errors.map((e) => {
    // Intersection and union members are keyed by their index: skip those, keep field names and array indexes.
    const path = e.context
      .filter((c, i) => {
        if (c.key === "") return false;
        const parent = e.context[i - 1]?.type;
        return !(parent instanceof t.IntersectionType || parent instanceof t.UnionType);
      })
      .map((c) => c.key)
      .join(".");
    const expected = e.context[e.context.length - 1]?.type.name ?? "?";
    let shown: string;
    try {
      shown = JSON.stringify(e.value) ?? "undefined";
    } catch {
      shown = String(e.value);
    }
    if (shown.length > 80) shown = `${shown.slice(0, 77)}...`;
    return `${path === "" ? "(body)" : path}: expected ${expected}, got ${shown}`;
  });

/** Decode or throw a `CouchDecodeError` naming `endpoint` and the field. */
export const decodeBody = <A>(codec: t.Decoder<unknown, A>, body: unknown, endpoint: string): A => {
  const result = codec.decode(body);
  if (isLeft(result)) throw new CouchDecodeError(endpoint, describeErrors(result.left));
  return result.right;
};
