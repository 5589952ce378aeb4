/**
 * The background indexing contract: the same scenarios against every store
 * (the in-memory store, PouchDB Server, a real CouchDB), through
 * `createUpholster` on real time, as `upholster run` runs it:
 *
 * - a design doc and docs written, no query: the view is up to date within a bound;
 * - after a burst of updates, the index catches up;
 * - `autoupdate: false` is respected;
 * - old index files are cleaned after a design doc changes.
 *
 * Waits are for conditions with generous limits, never timed assertions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Upholster } from "../../src/runtime/upholster.js";
import type { Store } from "../../src/ports/store.js";
import { waitFor } from "../support/wait-for.js";

export interface IndexingHarness {
  readonly store: Store;
  readonly upholster: Upholster;
  /** Rows of a view read without updating it (`update=false`): what the background indexer built. */
  rowsWithoutUpdate(db: string, ddoc: string, view: string): Promise<number>;
  deleteDb(db: string): Promise<void>;
  /** Bytes of view index files of the store, where it can tell (the memory store). */
  viewFileBytes?(): number;
  close(): Promise<void>;
}

export interface IndexingContractOptions {
  /** The store cannot tell where an index stands (PouchDB Server): the autoupdate check reads rows instead of seqs. */
  readonly noProgress?: string;
  readonly timeoutMs?: number;
}

/** Quiet smoosh (no channels), a short indexing delay: the scenarios watch indexing alone. */
export const indexingContractConfig = {
  smoosh: { db_channels: "", view_channels: "", cleanup_channels: "" },
  fabric: { index_updater_delay_msec: "50", index_updater_resolution_msec: "50" },
};

const VIEWS = { views: { by_n: { map: "function (doc) { if (doc.n !== undefined) emit(doc.n, 1); }", reduce: "_sum" } } };

const unique = (stem: string): string => `upholster_ken_${stem}_${Math.random().toString(36).slice(2, 8)}`;

const docs = (count: number, round: number, revs: Map<string, string>) =>
  Array.from({ length: count }, (_, i) => ({ _id: `d${i}`, ...(revs.has(`d${i}`) ? { _rev: revs.get(`d${i}`) } : {}), n: i, round }));

async function write(store: Store, db: string, count: number, round: number, revs: Map<string, string>): Promise<void> {
  for (const result of await store.bulkDocs(db, docs(count, round, revs))) if (result.ok) revs.set(result.id, result.rev);
}

async function putDdoc(store: Store, db: string, id: string, body: Record<string, unknown>): Promise<void> {
  const current = await store.getDoc(db, id);
  const [result] = await store.bulkDocs(db, [{ ...body, _id: id, ...(current === undefined ? {} : { _rev: current._rev }) }]);
  if (result?.ok !== true) throw new Error(`writing ${id}: ${JSON.stringify(result)}`);
}

export function indexingContract(name: string, makeHarness: () => Promise<IndexingHarness>, options: IndexingContractOptions = {}): void {
  const timeoutMs = options.timeoutMs ?? 60_000;
  describe(`indexing contract: ${name}`, () => {
    let h: IndexingHarness;
    beforeAll(async () => {
      h = await makeHarness();
    }, 90_000);
    afterAll(async () => {
      await h?.close();
    });

    /** Every view of the design doc built to the db's seq, as the background indexer knows it. */
    const fresh = async (db: string, ddoc: string): Promise<boolean> => {
      const seq = (await h.store.dbInfo(db))?.updateSeqNumber ?? Number.POSITIVE_INFINITY;
      const lags = await h.upholster.indexing.lag(db, ddoc);
      if (lags.length > 0 && lags.every((l) => l.lag !== null)) return lags.every((l) => l.lag === 0);
      const known = h.upholster.indexing.status().indexes.filter((i) => i.db === db && i.ddocs.includes(ddoc));
      return known.length > 0 && known.every((i) => i.indexSeq !== null && i.indexSeq >= seq);
    };

    it(
      "a design doc and docs written, no query: the view is up to date within a bound",
      async () => {
        const db = unique("fresh");
        await h.store.ensureDb(db);
        await putDdoc(h.store, db, "_design/app", VIEWS);
        await write(h.store, db, 500, 0, new Map());
        await waitFor(() => fresh(db, "_design/app"), "the view up to date without any query", timeoutMs, 100);
        expect(await h.rowsWithoutUpdate(db, "_design/app", "by_n")).toBe(500);
        await h.deleteDb(db);
      },
      timeoutMs + 30_000,
    );

    it(
      "after a burst of updates, the index catches up",
      async () => {
        const db = unique("burst");
        const revs = new Map<string, string>();
        await h.store.ensureDb(db);
        await putDdoc(h.store, db, "_design/app", VIEWS);
        await write(h.store, db, 300, 0, revs);
        await waitFor(() => fresh(db, "_design/app"), "the first build", timeoutMs, 100);
        for (let round = 1; round <= 4; round++) await write(h.store, db, 300, round, revs);
        await waitFor(() => fresh(db, "_design/app"), "the index caught up after the burst", timeoutMs, 100);
        expect(h.upholster.indexing.metrics().buildsStarted).toBeGreaterThan(1);
        await h.deleteDb(db);
      },
      timeoutMs * 2 + 30_000,
    );

    it(
      "autoupdate: false is respected",
      async () => {
        const db = unique("noauto");
        await h.store.ensureDb(db);
        await putDdoc(h.store, db, "_design/off", { ...VIEWS, autoupdate: false });
        await putDdoc(h.store, db, "_design/on", { views: { all: { map: "function (doc) { emit(doc._id); }" } } });
        await write(h.store, db, 200, 0, new Map());
        await waitFor(() => fresh(db, "_design/on"), "the other view built", timeoutMs, 100);
        // Both were inspected together: had the switch been ignored, the first would have been built as well.
        await waitFor(() => h.upholster.indexing.status().queue.waiting === 0 && h.upholster.indexing.metrics().buildsRunning === 0, "nothing left to build", timeoutMs, 100);
        if (options.noProgress === undefined) {
          const [off] = await h.upholster.indexing.lag(db, "_design/off");
          expect(off).toMatchObject({ autoUpdate: false, indexSeq: 0 });
        }
        expect(h.upholster.indexing.status().indexes.filter((i) => i.db === db).map((i) => i.name)).toEqual(["_design/on"]);
        await h.deleteDb(db);
      },
      timeoutMs + 30_000,
    );

    it(
      "old index files are cleaned after the design doc changes",
      async () => {
        const db = unique("cleanup");
        await h.store.ensureDb(db);
        await putDdoc(h.store, db, "_design/app", VIEWS);
        await write(h.store, db, 300, 0, new Map());
        await waitFor(() => fresh(db, "_design/app"), "the first index", timeoutMs, 100);
        const bytesBefore = h.viewFileBytes?.();
        const cleanupsBefore = h.upholster.indexing.metrics().cleanups;
        await putDdoc(h.store, db, "_design/app", { views: { doubled: { map: "function (doc) { emit(doc.n * 2, 1); }" } } });
        await waitFor(async () => (await fresh(db, "_design/app")) && h.upholster.indexing.metrics().cleanups > cleanupsBefore, "the new index built and the stale one cleaned", timeoutMs, 100);
        // Where the store shows its files: the old index is gone, only the new one is left.
        if (bytesBefore !== undefined) await waitFor(() => h.viewFileBytes!() < bytesBefore * 1.5, "the old index file removed", timeoutMs, 100);
        await h.deleteDb(db);
      },
      timeoutMs * 2 + 30_000,
    );
  });
}
