/**
 * The memory store's `ViewStore`: view queries, `_info`, and updates of the
 * view index groups, over the store's databases.
 *
 * Updates are shared (`SharedUpdate`): a query with `update=true`, the
 * background indexer and `buildViews` asking for the same index wait on one
 * pass. An update that committed rows emits `view-updated` for every design
 * doc using the index (the compaction daemon listens). Errors are CouchDB's,
 * as `ViewError`s; nothing here throws synchronously.
 */
import { resolveViewQuery, type ViewQuery } from "../../../core/views/index.js";
import type { StoreEvent } from "../../../ports/events.js";
import type { Logger } from "../../../ports/shell.js";
import type { DbName, DesignDocId } from "../../../ports/store.js";
import { ViewError, type ViewGroupInfo, type ViewResult } from "../../../ports/views.js";
import { liveDocJson, type MemoryDatabase } from "../database.js";
import { stableDigest } from "../revisions.js";
import { answerViewQuery } from "./answer-query.js";
import type { DbViews } from "./db-views.js";
import type { GroupIndex } from "./group-index.js";
import { PassLog } from "./pass-log.js";
import type { SandboxCache } from "./sandbox-cache.js";
import { DatabaseGoneError, runUpdatePass } from "./update-pass.js";

/** What the views need from the store. */
export interface ViewHost {
  /** The db's data and views, or undefined when it does not exist. */
  database(db: DbName): { readonly data: MemoryDatabase; readonly views: DbViews } | undefined;
  emit(event: StoreEvent): void;
  compactionRunning(db: DbName, signature: string): boolean;
  readonly logger: Logger;
}

const DB_MISSING = (): ViewError => new ViewError(404, "not_found", "Database does not exist.");

/** `collator_versions`: CouchDB reports its ICU collator's; this is Node's ICU. */
const COLLATOR_VERSIONS: readonly string[] = [process.versions.icu ?? "unknown"];

export class MemoryViews {
  constructor(
    private readonly host: ViewHost,
    private readonly sandboxes: SandboxCache,
  ) {}

  async queryView(db: DbName, ddoc: DesignDocId, view: string, query: ViewQuery): Promise<ViewResult> {
    const { stored, index, group } = this.designDoc(db, ddoc);
    const definition = group?.group.views.get(view);
    if (index === undefined || group === undefined || definition === undefined) throw new ViewError(404, "not_found", "missing_named_view");
    if (group.group.language !== "javascript") throw new ViewError(500, "unknown_query_language", group.group.language);
    const resolved = resolveViewQuery(query, { hasReduce: definition.reduce !== undefined }, index.compareKeys[definition.map]!);
    if (resolved._tag === "Left") throw new ViewError(resolved.left.status, resolved.left.error, resolved.left.reason);
    if (query.update === "true") await this.updateIndex(db, stored.data, index);
    const broken = index.brokenReason(definition.map);
    if (broken !== undefined) throw new ViewError(500, "map_function_stopped", `the map function of view ${JSON.stringify(view)} does not run: ${broken}`);
    const snapshot = index.snapshot();
    const result = answerViewQuery({
      index,
      snapshot,
      view: definition,
      query: resolved.right,
      loadDoc: (id, rev) => loadDoc(stored.data, id, rev),
      updateSeq: query.updateSeq ? String(snapshot.seq) : undefined,
    });
    if (query.update === "lazy") this.updateIndex(db, stored.data, index).catch(() => undefined);
    return result;
  }

  async viewGroupInfo(db: DbName, ddoc: DesignDocId): Promise<ViewGroupInfo> {
    const { stored, index, group } = this.designDoc(db, ddoc);
    const name = ddoc.startsWith("_design/") ? ddoc.slice("_design/".length) : ddoc;
    if (index === undefined || group === undefined) return emptyInfo(name, stored.data);
    const pending = stored.data.changedDocsSince(index.seq);
    return {
      name,
      view_index: {
        signature: index.signature,
        language: group.group.language,
        sizes: { file: index.fileBytes, active: index.activeBytes, external: index.externalBytes },
        update_seq: index.seq,
        purge_seq: 0,
        updater_running: index.update.isRunning,
        compact_running: this.host.compactionRunning(db, index.signature),
        waiting_clients: index.update.waitingClients,
        waiting_commit: false,
        collator_versions: COLLATOR_VERSIONS,
        updates_pending: { minimum: pending, preferred: pending, total: pending },
      },
    };
  }

  async updateViewGroup(db: DbName, ddoc: DesignDocId): Promise<{ readonly indexSeq: number }> {
    const { stored, index } = this.designDoc(db, ddoc);
    if (index === undefined) return { indexSeq: stored.data.updateSeq };
    return { indexSeq: await this.updateIndex(db, stored.data, index) };
  }

  /** Brings every index some design doc of `db` uses up to date; the design docs whose index grew. */
  async buildViews(db: DbName): Promise<DesignDocId[]> {
    const stored = this.host.database(db);
    if (stored === undefined) return [];
    const indexes = stored.views.indexesInUse();
    const grownDdocs = async (index: GroupIndex): Promise<readonly string[]> => {
      const before = index.appendedBytesTotal;
      await this.updateIndex(db, stored.data, index);
      return index.appendedBytesTotal > before ? stored.views.ddocsUsing(index.signature) : [];
    };
    // One index (the usual case): no gathering, and its design docs are sorted already (copied: they are cached).
    if (indexes.length === 1) return [...(await grownDdocs(indexes[0]!))];
    return (await Promise.all(indexes.map(grownDdocs))).flat().sort();
  }

  /** The shared update of one index: joins the pass in flight, or the follow-up one. */
  private updateIndex(db: DbName, data: MemoryDatabase, index: GroupIndex): Promise<number> {
    const current = (): MemoryDatabase | undefined => (this.host.database(db)?.data === data ? data : undefined);
    const seqNow = (): number => current()?.updateSeq ?? index.seq;
    const pass = async (targetSeq: number): Promise<number> => {
      const stored = this.host.database(db);
      const ddocs = stored?.views.ddocsUsing(index.signature) ?? [];
      const log = new PassLog(this.host.logger, { db, signature: index.signature, ddocs });
      const result = await runUpdatePass({ dbName: db, index, database: current, sandboxes: this.sandboxes, log }, targetSeq);
      if (result.appendedBytes > 0) for (const ddoc of ddocs) this.host.emit({ type: "view-updated", db, ddoc });
      return result.seq;
    };
    if (!index.update.isRunning && index.seq >= seqNow()) return Promise.resolve(index.seq);
    return index.update.request(seqNow(), seqNow, pass).catch((error: unknown) => {
      if (error instanceof DatabaseGoneError) throw DB_MISSING();
      throw new ViewError(500, "index_update_failed", error instanceof Error ? error.message : String(error));
    });
  }

  private designDoc(db: DbName, ddoc: DesignDocId) {
    const stored = this.host.database(db);
    if (stored === undefined) throw DB_MISSING();
    const record = stored.data.getDoc(ddoc);
    if (record === undefined) throw new ViewError(404, "not_found", "missing");
    if (record.deleted) throw new ViewError(404, "not_found", "deleted");
    return { stored, index: stored.views.indexFor(ddoc), group: stored.views.groupOf(ddoc) };
  }
}

/** A live doc as CouchDB shows it (`_id`, `_rev` first), or null. */
const loadDoc = (data: MemoryDatabase, id: string, rev: string | undefined): unknown => {
  const record = data.getDoc(id);
  if (record === undefined || record.deleted || (rev !== undefined && rev !== record.rev)) return null;
  return JSON.parse(liveDocJson(record)) as unknown;
};

/** `_info` of a design doc without views: CouchDB has an (empty) index for any design doc. */
const emptyInfo = (name: string, data: MemoryDatabase): ViewGroupInfo => ({
  name,
  view_index: {
    signature: stableDigest({ language: "javascript", views: {} }),
    language: "javascript",
    sizes: { file: 0, active: 0, external: 0 },
    update_seq: data.updateSeq,
    purge_seq: 0,
    updater_running: false,
    compact_running: false,
    waiting_clients: 0,
    waiting_commit: false,
    collator_versions: COLLATOR_VERSIONS,
    updates_pending: { minimum: 0, preferred: 0, total: 0 },
  },
});
