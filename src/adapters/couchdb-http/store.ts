/**
 * The store ports (CompactionStore & DocumentStore) over a CouchClient.
 * Every body is decoded (decoders.ts); a missing db/ddoc is `undefined` or
 * `[]`, other failures reject with an error naming the endpoint.
 */
import type {
  ChangesPage,
  ChangesQuery,
  CompactionObject,
  DbInfo,
  DbListing,
  DesignDoc,
  DocWrite,
  DocWriteResult,
  JobHandle,
  Store,
  StoredDoc,
  ViewIndexInfo,
} from "../../ports/store.js";
import type { Logger, Scheduler } from "../../ports/shell.js";
import type { CouchClient } from "./client.js";
import type { CompactedSeqs } from "./compacted-seq.js";
import {
  ActiveTasks,
  BulkDocsBody,
  ChangesBody,
  DbInfoBody,
  DbNames,
  DbsInfoBody,
  decodeBody,
  DesignDocsBody,
  RootInfo,
  StoredDocBody,
  ViewInfoBody,
  type ActiveTask,
} from "./decoders.js";
import { CouchHttpError } from "./errors.js";
import { taskDbName, watchCompaction, type CompactionProbe } from "./jobs.js";
import { dbPath, ddocName, docPath, reportsCompactRunning, toDbInfo, toViewIndexInfo } from "./mapping.js";
import { clusteredDbOf, listShards, parseShardObjectName, shardPath } from "./shards.js";
import { seqString } from "./seq.js";
import { compareDbNames } from "../../core/db-updates/db-order.js";
import { RecentInfos } from "./recent-infos.js";
import { DbsInfoLimit } from "./dbs-info-limit.js";
import { ServerDaemonsWatch } from "./server-daemons-watch.js";
import { DEFAULT_DBS_PER_INFO_REQUEST } from "../../core/shared/dbs-info.js";

export type Granularity = "database" | "shard";

export interface StoreOptions {
  readonly client: CouchClient;
  readonly compactedSeqs: CompactedSeqs;
  readonly logger: Logger;
  readonly scheduler: Scheduler;
  readonly granularity: Granularity;
  /**
   * How often the daemon reads a running db compaction's info (`jobLookIntervalMs`);
   * how old an info may be to serve a start; the watcher asks by itself after 1.5 times it.
   */
  readonly jobPollIntervalMs: number;
  /** Keys per `POST /_dbs_info`: the server's `[chttpd] max_db_number_for_dbs_info_req` as upholster's config says (default 100). */
  readonly dbsInfoMaxKeys?: number | undefined;
}

/** What the server turned out to support (learnt lazily, shown in status). */
export interface ServerCapabilities {
  vendor: "couchdb" | "pouchdb-server" | "unknown";
  version?: string | undefined;
  /** `POST /_dbs_info`: CouchDB >= 2.2; PouchDB Server answers 404. */
  dbsInfo: boolean;
  /** `GET /_all_dbs?startkey=..&limit=..` honoured (learnt: a server that ignores it lists names before `startkey`). */
  allDbsPaging: boolean;
}

/** Parallel `GET /{db}` where `_dbs_info` is missing. */
const perDbConcurrency = 8;

/** Dbs `_db_updates` reports that are not worth reconciling: CouchDB's own feed db, written on every event. */
export const unreconciledDbs: ReadonlySet<string> = new Set(["_global_changes"]);

/**
 * The daemon reads a running db compaction after each wait (`jobLookIntervalMs`
 * while it is young, longer as it runs on: core/compaction/look-delay.ts): its
 * watcher waits half a wait more before asking by itself, so that read comes first.
 */
const OWN_LOOK_AFTER_WAITS = 1.5;

export class CouchStore implements Store, DbListing {
  readonly capabilities: ServerCapabilities = { vendor: "unknown", dbsInfo: true, allDbsPaging: true };
  /** Every clustered db info read, for parts that can make do with a recent one (design doc checks). */
  readonly recentInfos = new RecentInfos(100_000);
  private probed: Promise<void> | undefined;
  /** Clustered db -> its shard objects, from the last shard listing (shard granularity). */
  shardsByDb = new Map<string, string[]>();

  /**
   * A clustered db's compaction ends unannounced (no event says so): the
   * daemon reads its info every `job_poll_interval_ms`, in a `_dbs_info`
   * that also carries the channel's next db (its precheck). Shard objects
   * are watched here alone. An own field, so that wrappers that spread the
   * store keep it.
   */
  readonly jobLookIntervalMs: number | undefined;

  /** The server's `_dbs_info` key limit as its answers tell it (dbs-info-limit.ts). */
  private readonly dbsInfoLimit: DbsInfoLimit;
  /**
   * Keys per `POST /_dbs_info`: the configured number until the server
   * refuses a request as `too_many_keys` (its limit is lower than upholster
   * was told), then what `dbsInfoLimit` learns. An own field: the daemon
   * reads it at its start and after every answer, and packs its checks to it.
   */
  dbInfosBatchSize: number;

  /** CouchDB's own smoosh and ken, and its `_dbs_info` key limit, read from its config (server-daemons.ts). */
  readonly serverDaemons: ServerDaemonsWatch;

  constructor(private readonly o: StoreOptions) {
    this.jobLookIntervalMs = this.shardMode ? undefined : o.jobPollIntervalMs;
    this.dbsInfoLimit = new DbsInfoLimit(o.dbsInfoMaxKeys ?? DEFAULT_DBS_PER_INFO_REQUEST);
    this.dbInfosBatchSize = this.dbsInfoLimit.keysPerRequest;
    this.serverDaemons = new ServerDaemonsWatch(o.client, o.logger, o.scheduler, (limit) => this.noteServerDbsInfoLimit(limit));
  }

  /** `GET /` once: which server is this. Failure is not cached (the server may be down now). */
  probe(): Promise<void> {
    this.probed ??= (async () => {
      const root = decodeBody(RootInfo, (await this.o.client.call({ method: "GET", path: "/" })).body, "GET /");
      if (root["express-pouchdb"] !== undefined) {
        this.capabilities.vendor = "pouchdb-server";
        this.capabilities.version = root.version;
      } else if (root.couchdb !== undefined) {
        this.capabilities.vendor = "couchdb";
        this.capabilities.version = root.version;
      }
    })().catch((e: unknown) => {
      this.probed = undefined;
      throw e;
    });
    return this.probed;
  }

  private get shardMode(): boolean {
    return this.o.granularity === "shard";
  }

  // --- CompactionStore ---------------------------------------------------------

  async listDbs(): Promise<string[]> {
    if (this.shardMode) {
      const { names, byDb } = await listShards(this.o.client);
      this.shardsByDb = byDb;
      return names;
    }
    return decodeBody(DbNames, (await this.o.client.call({ method: "GET", path: "/_all_dbs" })).body, "GET /_all_dbs");
  }

  // --- DbListing ---------------------------------------------------------------------------

  /**
   * One page of `_all_dbs` after `after` (clustered dbs whatever the
   * granularity). `startkey` is inclusive, so one more is asked for and
   * `after` itself dropped (and one more per db left out, so a full page
   * stays full). A server that ignores `startkey`/`limit` (it
   * lists a name before `startkey`) gets the whole list from then on, cut
   * here: slower, never wrong (a short page would read as deletions).
   */
  async listDbsAfter(after: string | undefined, limit: number): Promise<string[]> {
    const want = Math.max(0, limit);
    const paged = this.capabilities.allDbsPaging;
    const query = paged ? { limit: want + 1 + unreconciledDbs.size, ...(after === undefined ? {} : { startkey: JSON.stringify(after) }) } : undefined;
    const names = decodeBody(DbNames, (await this.o.client.call({ method: "GET", path: "/_all_dbs", query })).body, "GET /_all_dbs");
    if (paged && after !== undefined && names.some((db) => compareDbNames(db, after) < 0)) {
      this.capabilities.allDbsPaging = false;
      this.o.logger.info({}, "server ignores _all_dbs startkey/limit; listing every db per page");
      return this.listDbsAfter(after, limit);
    }
    const later = names.filter((db) => (after === undefined || compareDbNames(db, after) > 0) && !unreconciledDbs.has(db));
    return later.sort(compareDbNames).slice(0, want);
  }

  async dbUpdateSeqs(dbs: readonly string[]): Promise<Map<string, string>> {
    const infos = await this.infosOf(dbs, true);
    return new Map([...infos].map(([db, info]) => [db, info.updateSeq]));
  }

  /** Info path of a compaction object's db: clustered `/{db}` or node-local `/_node/{node}/{shard}`. */
  private infoPath(db: string, clustered = false): string {
    const ref = this.shardMode && !clustered ? parseShardObjectName(db) : undefined;
    return ref === undefined ? dbPath(db) : shardPath(ref);
  }

  async dbInfo(db: string): Promise<DbInfo | undefined> {
    const body = await this.rawDbInfo(db);
    if (body === undefined) return undefined;
    await this.o.compactedSeqs.load();
    return this.noted(toDbInfo(db, body, this.o.compactedSeqs.get(db), `GET ${this.infoPath(db)}`), body);
  }

  /** Remember a clustered db's info (shard infos are per shard: not what the design doc checks compare). */
  private noted(info: DbInfo, body: DbInfoBody): DbInfo {
    if (parseShardObjectName(info.db) === undefined) this.recentInfos.note(info, this.o.scheduler.nowMs(), reportsCompactRunning(body));
    return info;
  }

  private async rawDbInfo(db: string, clustered = false): Promise<DbInfoBody | undefined> {
    const path = this.infoPath(db, clustered);
    const res = await this.o.client.call({ method: "GET", path, accept: [404] });
    if (res.status === 404) return undefined;
    return decodeBody(DbInfoBody, res.body, `GET ${path}`);
  }

  async dbInfos(dbs: readonly string[]): Promise<Map<string, DbInfo>> {
    return this.infosOf(dbs, !this.shardMode);
  }

  /** Clustered db infos whatever the granularity (the polling event source compares these). */
  clusteredDbInfos(dbs: readonly string[]): Promise<Map<string, DbInfo>> {
    return this.infosOf(dbs, true);
  }

  private async clusteredDbInfo(db: string): Promise<DbInfo | undefined> {
    const body = await this.rawDbInfo(db, true);
    return body === undefined ? undefined : this.noted(toDbInfo(db, body, this.o.compactedSeqs.get(db), `GET ${dbPath(db)}`), body);
  }

  private async infosOf(dbs: readonly string[], clustered: boolean): Promise<Map<string, DbInfo>> {
    const out = new Map<string, DbInfo>();
    await this.o.compactedSeqs.load();
    const useBatch = this.capabilities.dbsInfo && clustered;
    let rest: readonly string[] = dbs;
    if (useBatch) {
      // A read of the server's config under way brings its key limit: batches sized to it are never refused.
      await this.serverDaemons.settled();
      rest = [];
      for (let i = 0; i < dbs.length; ) {
        const keys = dbs.slice(i, i + this.dbInfosBatchSize);
        const res = await this.o.client.call({ method: "POST", path: "/_dbs_info", body: { keys }, accept: [400, 404, 405] });
        if (keys.length > 1 && isTooManyKeys(res)) {
          this.noteDbsInfoRefused(keys.length);
          continue;
        }
        if (res.status !== 200) {
          // PouchDB Server (404) and CouchDB < 2.2: one GET per db from now on.
          this.capabilities.dbsInfo = false;
          this.o.logger.info({ status: res.status }, "server has no POST /_dbs_info; fetching db info one by one");
          rest = dbs.slice(i);
          break;
        }
        i += keys.length;
        this.noteDbsInfoAnswered(keys.length);
        for (const entry of decodeBody(DbsInfoBody, res.body, "POST /_dbs_info")) {
          if ("info" in entry) out.set(entry.key, this.noted(toDbInfo(entry.key, entry.info, this.o.compactedSeqs.get(entry.key), "POST /_dbs_info"), entry.info));
        }
      }
    }
    for (let i = 0; i < rest.length; i += perDbConcurrency) {
      const chunk = rest.slice(i, i + perDbConcurrency);
      const infos = await Promise.all(chunk.map((db) => (clustered ? this.clusteredDbInfo(db) : this.dbInfo(db))));
      infos.forEach((info, j) => {
        const db = chunk[j];
        if (info !== undefined && db !== undefined) out.set(db, info);
      });
    }
    return out;
  }

  /** The server refused `keys` keys in one `_dbs_info`: ask for fewer, and say (once) which key to set. */
  private noteDbsInfoRefused(keys: number): void {
    const wasSettled = this.dbsInfoLimit.settled;
    const refusal = this.dbsInfoLimit.refuse(keys);
    const fields = { refusedKeys: keys, keysPerRequest: this.dbsInfoLimit.keysPerRequest };
    if (refusal === "probe") this.o.logger.debug(fields, "CouchDB refused a probe of its _dbs_info key limit");
    else {
      this.o.logger.warn(
        fields,
        `CouchDB refused a POST /_dbs_info as too_many_keys: its [chttpd] max_db_number_for_dbs_info_req is ${refusal === "fell" ? "lower than it was" : "lower than upholster's"}; ` +
          "sending fewer keys a request, and finding its limit (set [chttpd] max_db_number_for_dbs_info_req in upholster's config to the server's value)",
      );
    }
    this.learnt(wasSettled);
  }

  /** The server's config says its `_dbs_info` key limit (each time it is read): batches fit it from now on. */
  private noteServerDbsInfoLimit(limit: number): void {
    const before = this.dbInfosBatchSize;
    this.dbsInfoLimit.told(limit);
    this.dbInfosBatchSize = this.dbsInfoLimit.keysPerRequest;
    if (this.dbInfosBatchSize !== before) {
      this.o.logger.info(
        { serverLimit: limit, keysPerRequest: this.dbInfosBatchSize },
        "CouchDB's [chttpd] max_db_number_for_dbs_info_req, read from its config: packing POST /_dbs_info to it",
      );
    }
  }

  /** The server answered `keys` keys. */
  private noteDbsInfoAnswered(keys: number): void {
    const wasSettled = this.dbsInfoLimit.settled;
    this.dbsInfoLimit.accept(keys);
    this.learnt(wasSettled);
  }

  /** Packs to what `dbsInfoLimit` says now; says so once it knows the limit after a refusal. */
  private learnt(wasSettled: boolean): void {
    this.dbInfosBatchSize = this.dbsInfoLimit.keysPerRequest;
    if (!wasSettled && this.dbsInfoLimit.settled) {
      this.o.logger.info({ keysPerRequest: this.dbInfosBatchSize }, "learnt CouchDB's POST /_dbs_info key limit ([chttpd] max_db_number_for_dbs_info_req)");
    }
  }

  async designDocs(db: string): Promise<DesignDoc[]> {
    return (await this.designDocsAndCount(db)).ddocs;
  }

  /**
   * A db's design docs, and its `doc_count` as of the listing: `_all_docs`
   * says `total_rows`, the same count, for free (the design doc checks
   * compare later counts with it; an info read before the listing may miss
   * documents the listing saw, and cost a listing more).
   */
  async designDocsAndCount(db: string): Promise<{ ddocs: DesignDoc[]; docCount: number | undefined }> {
    const clustered = clusteredDbOf(db);
    // `_all_docs` over the `_design/` key range works on CouchDB 1.x-3.x and PouchDB Server alike
    // (`_design_docs` is 2.2+ only); the row shape is the same (fixture 71).
    const path = `${dbPath(clustered)}/_all_docs`;
    const res = await this.o.client.call({
      method: "GET",
      path,
      query: { startkey: JSON.stringify("_design/"), endkey: JSON.stringify("_design0"), include_docs: true },
      accept: [404],
    });
    if (res.status === 404) return { ddocs: [], docCount: undefined };
    return decodeDesignDocs(res.body, `GET ${path}`);
  }

  async viewIndexInfo(db: string, ddoc: string): Promise<ViewIndexInfo | undefined> {
    const path = `${dbPath(clusteredDbOf(db))}${docPath(ddoc)}/_info`;
    const res = await this.o.client.call({ method: "GET", path, accept: [404] });
    if (res.status === 404) return undefined;
    const body = decodeBody(ViewInfoBody, res.body, `GET ${path}`);
    // PouchDB Server: `{view_index: "Not implemented."}`: no view index info, so no view compaction there.
    if (typeof body.view_index === "string") return undefined;
    return toViewIndexInfo(db, ddoc, body.view_index);
  }

  async activeTasks(): Promise<ActiveTask[]> {
    return decodeBody(ActiveTasks, (await this.o.client.call({ method: "GET", path: "/_active_tasks" })).body, "GET /_active_tasks");
  }

  async startJob(object: CompactionObject): Promise<JobHandle> {
    if (object.kind === "cleanup") {
      const path = `${dbPath(clusteredDbOf(object.db))}/_view_cleanup`;
      await this.o.client.call({ method: "POST", path, json: true });
      // CouchDB runs the cleanup in the background and reports no task for it: done once accepted.
      return { done: Promise.resolve({ ok: true }) };
    }
    // The precheck that led here read the db moments ago: an info from within a poll interval will do.
    const before = await this.sizeOf(object, this.o.scheduler.nowMs() - this.o.jobPollIntervalMs);
    if (before === undefined) throw new CouchHttpError(`GET ${this.describePath(object)}`, 404, "not_found", "nothing to compact");
    const path = this.compactPath(object);
    await this.o.client.call({ method: "POST", path, json: true });
    return this.watch(object, before.fileBytes);
  }

  async attachJob(object: CompactionObject): Promise<JobHandle> {
    const before = await this.sizeOf(object);
    return this.watch(object, before?.fileBytes);
  }

  private describePath(object: CompactionObject): string {
    return object.kind === "view" ? `${dbPath(clusteredDbOf(object.db))}${docPath(object.ddoc)}/_info` : this.infoPath(object.db);
  }

  private compactPath(object: Exclude<CompactionObject, { kind: "cleanup" }>): string {
    if (object.kind === "view") return `${dbPath(clusteredDbOf(object.db))}/_compact/${encodeURIComponent(ddocName(object.ddoc))}`;
    return `${this.infoPath(object.db)}/_compact`;
  }

  /**
   * A compaction's object, as the watcher polls it. A db info read since
   * `freshSinceMs` by anyone (the daemon's batched checks carry running
   * compactions' dbs along) stands in for a request of its own.
   */
  private async sizeOf(
    object: CompactionObject,
    freshSinceMs = Number.POSITIVE_INFINITY,
  ): Promise<{ fileBytes: number; running: boolean | undefined; updateSeq?: number } | undefined> {
    const recent = object.kind === "db" ? this.recentInfos.entrySince(object.db, freshSinceMs) : undefined;
    if (recent !== undefined) {
      return { fileBytes: recent.info.fileBytes, running: recent.reportsRunning ? recent.info.compactionRunning : undefined, updateSeq: recent.info.updateSeqNumber };
    }
    if (object.kind === "view") {
      const info = await this.viewIndexInfo(object.db, object.ddoc);
      return info === undefined ? undefined : { fileBytes: info.fileBytes, running: info.compactionRunning };
    }
    const body = await this.rawDbInfo(object.db);
    if (body === undefined) return undefined;
    const info = toDbInfo(object.db, body, undefined, `GET ${this.infoPath(object.db)}`);
    return { fileBytes: info.fileBytes, running: reportsCompactRunning(body) ? info.compactionRunning : undefined, updateSeq: info.updateSeqNumber };
  }

  private watch(object: CompactionObject, fileBytesBefore: number | undefined): JobHandle {
    const shardRef = this.shardMode ? parseShardObjectName(object.db) : undefined;
    const db = clusteredDbOf(object.db);
    const probe: CompactionProbe = {
      info: (freshSinceMs) => this.sizeOf(object, freshSinceMs),
      tasks: () => this.activeTasks(),
      waitForNews:
        object.kind === "db" && shardRef === undefined
          ? (maxWaitMs) => this.recentInfos.nextOf(object.db, Math.round(maxWaitMs * OWN_LOOK_AFTER_WAITS), this.o.scheduler)
          : undefined,
      matchesTask: (task) => {
        const type = object.kind === "view" ? "view_compaction" : "database_compaction";
        if (task.type !== type || task.database === undefined) return false;
        if (object.kind === "view" && task.design_document !== object.ddoc) return false;
        if (shardRef !== undefined) return task.database === shardRef.shard && (task.node === undefined || task.node === shardRef.node);
        return taskDbName(task.database) === db;
      },
      onFinished:
        object.kind === "db"
          ? async (last) => {
              if (last.updateSeq !== undefined) await this.o.compactedSeqs.record(object.db, last.updateSeq);
            }
          : undefined,
    };
    return watchCompaction(
      probe,
      {
        scheduler: this.o.scheduler,
        logger: this.o.logger,
        pollIntervalMs: this.o.jobPollIntervalMs,
        maxConsecutiveFailures: 30,
        stablePolls: 2,
        label: object.kind === "view" ? `${object.db} ${object.ddoc}` : object.db,
      },
      fileBytesBefore,
    );
  }

  // --- DocumentStore ---------------------------------------------------------------

  async ensureDb(db: string): Promise<void> {
    await this.o.client.call({ method: "PUT", path: dbPath(db), json: true, accept: [412] });
  }

  async getDoc(db: string, id: string): Promise<StoredDoc | undefined> {
    const path = `${dbPath(db)}${docPath(id)}`;
    const res = await this.o.client.call({ method: "GET", path, accept: [404] });
    if (res.status === 404) return undefined;
    return decodeBody(StoredDocBody, res.body, `GET ${path}`) as StoredDoc;
  }

  async bulkDocs(db: string, docs: readonly DocWrite[]): Promise<DocWriteResult[]> {
    if (docs.length === 0) return [];
    const path = `${dbPath(db)}/_bulk_docs`;
    const res = await this.o.client.call({ method: "POST", path, body: { docs } });
    return decodeBody(BulkDocsBody, res.body, `POST ${path}`).map((r) =>
      "rev" in r ? { id: r.id, ok: true as const, rev: r.rev } : { id: r.id, ok: false as const, error: r.error, reason: r.reason },
    );
  }

  async changes(db: string, query: ChangesQuery): Promise<ChangesPage> {
    const path = `${dbPath(db)}/_changes`;
    const res = await this.o.client.call({
      method: "GET",
      path,
      query: { since: query.since, limit: query.limit, descending: query.descending, include_docs: query.includeDocs === true ? true : undefined },
    });
    return decodeChanges(res.body, `GET ${path}`);
  }

  async currentSeq(db: string): Promise<string> {
    const body = await this.rawDbInfo(db);
    if (body === undefined) throw new CouchHttpError(`GET ${dbPath(db)}`, 404, "not_found", "Database does not exist.");
    return seqString(body.update_seq);
  }
}

export const decodeDesignDocs = (body: unknown, endpoint: string): { ddocs: DesignDoc[]; docCount: number | undefined } => {
  const decoded = decodeBody(DesignDocsBody, body, endpoint);
  const ddocs = decoded.rows
    .filter((row) => row.id.startsWith("_design/"))
    .map((row) => {
      const doc = row.doc ?? undefined;
      const bodyFields: Record<string, unknown> = {};
      if (doc !== undefined) for (const [k, v] of Object.entries(doc)) if (k !== "_id" && k !== "_rev") bodyFields[k] = v;
      return { id: row.id, rev: row.value.rev, body: bodyFields };
    });
  return { ddocs, docCount: decoded.total_rows };
};

export const decodeChanges = (body: unknown, endpoint: string): ChangesPage => {
  const decoded = decodeBody(ChangesBody, body, endpoint);
  return {
    results: decoded.results.map((r) => ({
      id: r.id,
      seq: seqString(r.seq),
      rev: r.changes[0]?.rev ?? "",
      ...(r.deleted === true ? { deleted: true } : {}),
      ...(r.doc !== undefined && r.doc !== null ? { doc: r.doc as StoredDoc } : {}),
    })),
    lastSeq: seqString(decoded.last_seq),
  };
};

/** CouchDB's answer to more `_dbs_info` keys than `[chttpd] max_db_number_for_dbs_info_req`: 400 `{"error":"bad_request","reason":"too_many_keys"}`. */
const isTooManyKeys = (res: { readonly status: number; readonly body: unknown }): boolean =>
  res.status === 400 && typeof res.body === "object" && res.body !== null && (res.body as { reason?: unknown }).reason === "too_many_keys";
