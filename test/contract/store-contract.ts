/**
 * The store contract: the SAME scenarios against every store adapter (the
 * in-memory store, a real CouchDB named by COUCHDB_URL). A harness gives the
 * port objects plus what the scenarios need from outside the ports: creating
 * and deleting dbs, building a view, and cutting the server off.
 * Daemon-level scenarios (upholster compacting by itself) are added by the runtime's tests.
 */
import { describe, expect, it } from "vitest";
import type { EventSource, StoreEvent } from "../../src/ports/events.js";
import type { Store } from "../../src/ports/store.js";
import { waitFor } from "../support/wait-for.js";
import type { ServerControl } from "./server-control.js";

export interface StoreHarness extends ServerControl {
  readonly store: Store;
  /** A fresh event source over the same saved state: a restart of upholster's feed. */
  newEventSource(): EventSource;
}

/** Unique db names per run (a real server keeps what earlier runs left). */
const unique = (stem: string): string => `upholster_contract_${stem}_${Math.random().toString(36).slice(2, 8)}`;

const grow = async (store: Store, db: string, docs: number, rounds: number): Promise<void> => {
  let revs = new Map<string, string>();
  const body = "y".repeat(400);
  for (const r of await store.bulkDocs(db, Array.from({ length: docs }, (_, i) => ({ _id: `d${i}`, type: "item", n: i, body })))) if (r.ok) revs.set(r.id, r.rev);
  for (let round = 0; round < rounds; round++) {
    const res = await store.bulkDocs(db, [...revs].map(([id, rev]) => ({ _id: id, _rev: rev, type: "item", n: round, body })));
    revs = new Map(res.flatMap((r) => (r.ok ? [[r.id, r.rev] as [string, string]] : [])));
  }
};

const collect = (): { events: StoreEvent[]; listener: (e: StoreEvent) => void } => {
  const events: StoreEvent[] = [];
  return { events, listener: (e) => events.push(e) };
};

export const storeContract = (name: string, makeHarness: () => Promise<StoreHarness>): void => {
  describe(`store contract: ${name}`, () => {
    it("a db grown with writes and updates qualifies (file >> active), compaction makes sizes.file fall", async () => {
      const h = await makeHarness();
      try {
        const db = unique("grow");
        await h.createDb(db);
        await grow(h.store, db, 300, 8);
        const before = await h.store.dbInfo(db);
        expect(before).toBeDefined();
        if (before === undefined) return;
        expect(before.fileBytes / Math.max(1, before.activeBytes)).toBeGreaterThan(2);
        expect(before.updateSeqNumber).toBeGreaterThanOrEqual(300 * 9);
        const job = await h.store.startJob({ kind: "db", db });
        expect((await job.done).ok).toBe(true);
        const after = await h.store.dbInfo(db);
        expect(after?.fileBytes).toBeLessThan(before.fileBytes / 2);
        expect(after?.compactionRunning).toBe(false);
        await h.deleteDb(db);
      } finally {
        await h.close();
      }
    });

    it("a view index grown by updates compacts smaller; view cleanup runs after a design doc change", async () => {
      const h = await makeHarness();
      try {
        const db = unique("view");
        await h.createDb(db);
        const [put] = await h.store.bulkDocs(db, [{ _id: "_design/d", views: { v: { map: "function (doc) { if (doc.type === 'item') { emit(doc.n, doc.body); } }" } } }]);
        expect(put?.ok).toBe(true);
        await grow(h.store, db, 200, 1);
        await h.buildViews(db, "_design/d", "v");
        for (let round = 0; round < 4; round++) {
          await grow(h.store, db, 0, 0);
          const docs = await Promise.all(Array.from({ length: 200 }, (_, i) => h.store.getDoc(db, `d${i}`)));
          await h.store.bulkDocs(db, docs.flatMap((d) => (d === undefined ? [] : [{ ...d, n: round * 1000 + Number(d.n ?? 0) }])));
          await h.buildViews(db, "_design/d", "v");
        }
        const before = await waitFor(async () => {
          const info = await h.store.viewIndexInfo(db, "_design/d");
          return info !== undefined && info.fileBytes > info.activeBytes ? info : undefined;
        }, "view index with garbage");
        const job = await h.store.startJob({ kind: "view", db, ddoc: "_design/d" });
        expect((await job.done).ok).toBe(true);
        const after = await h.store.viewIndexInfo(db, "_design/d");
        expect(after?.fileBytes).toBeLessThan(before.fileBytes);
        // Design doc change: the old index is orphaned; cleanup is accepted and completes.
        const ddoc = await h.store.getDoc(db, "_design/d");
        await h.store.bulkDocs(db, [{ ...(ddoc ?? { _id: "_design/d" }), views: { v2: { map: "function (doc) { emit(doc._id, null); }" } } }]);
        const cleanup = await h.store.startJob({ kind: "cleanup", db });
        expect((await cleanup.done).ok).toBe(true);
        expect((await h.store.designDocs(db)).map((d) => d.id)).toEqual(["_design/d"]);
        await h.deleteDb(db);
      } finally {
        await h.close();
      }
    });

    it("attaching to a compaction already running: both watchers see it end, no second compaction fails", async () => {
      const h = await makeHarness();
      try {
        const db = unique("adopt");
        await h.createDb(db);
        await grow(h.store, db, 300, 8);
        const started = await h.store.startJob({ kind: "db", db });
        const adopted = await h.store.attachJob({ kind: "db", db });
        const [a, b] = await Promise.all([started.done, adopted.done]);
        expect(a.ok).toBe(true);
        expect(b.ok).toBe(true);
        expect((await h.store.dbInfo(db))?.compactionRunning).toBe(false);
        await h.deleteDb(db);
      } finally {
        await h.close();
      }
    });

    it("changes with includeDocs: each row carries its doc at that rev, a deletion as a tombstone; without it, none", async () => {
      const h = await makeHarness();
      try {
        const db = unique("changes_docs");
        await h.createDb(db);
        const [a, b] = await h.store.bulkDocs(db, [
          { _id: "a", n: 1 },
          { _id: "b", n: 2 },
        ]);
        if (!a?.ok || !b?.ok) throw new Error("writes failed");
        await h.store.bulkDocs(db, [{ _id: "b", _rev: b.rev, _deleted: true }]);
        const page = await h.store.changes(db, { includeDocs: true });
        const byId = new Map(page.results.map((row) => [row.id, row]));
        expect(byId.get("a")?.doc).toMatchObject({ _id: "a", _rev: a.rev, n: 1 });
        expect(byId.get("b")?.deleted).toBe(true);
        expect(byId.get("b")?.doc).toMatchObject({ _id: "b", _deleted: true });
        const limited = await h.store.changes(db, { includeDocs: true, limit: 1 });
        expect(limited.results).toHaveLength(1);
        expect(limited.results[0]?.doc?._id).toBe(limited.results[0]?.id);
        const plain = await h.store.changes(db, {});
        expect(plain.results.every((row) => row.doc === undefined)).toBe(true);
        await h.deleteDb(db);
      } finally {
        await h.close();
      }
    });

    it("the event source delivers created, updated and deleted", async () => {
      const h = await makeHarness();
      const source = h.newEventSource();
      const { events, listener } = collect();
      try {
        await source.start(listener);
        const db = unique("events");
        await h.createDb(db);
        await waitFor(() => events.some((e) => e.type === "db-created" && e.db === db), "db-created");
        await h.store.bulkDocs(db, [{ _id: "a" }]);
        await waitFor(() => events.some((e) => e.type === "db-updated" && e.db === db), "db-updated");
        await h.deleteDb(db);
        await waitFor(() => events.some((e) => e.type === "db-deleted" && e.db === db), "db-deleted");
      } finally {
        await source.stop();
        await h.close();
      }
    });

    it("restart of the event source mid-feed: an update made while it was stopped is not missed", async () => {
      const h = await makeHarness();
      const db = unique("restart");
      try {
        const first = h.newEventSource();
        const one = collect();
        await first.start(one.listener);
        await h.createDb(db);
        await waitFor(() => one.events.some((e) => e.db === db), "first event");
        await first.stop();
        await h.store.bulkDocs(db, [{ _id: "while-stopped" }]);
        const second = h.newEventSource();
        const two = collect();
        await second.start(two.listener);
        try {
          await waitFor(() => two.events.some((e) => e.type === "db-updated" && e.db === db), "the update made while stopped");
        } finally {
          await second.stop();
        }
        await h.deleteDb(db);
      } finally {
        await h.close();
      }
    });

    it("the server going away and coming back: calls reject (no crash), status shows it, events resume", async () => {
      const h = await makeHarness();
      const source = h.newEventSource();
      const { events, listener } = collect();
      try {
        await source.start(listener);
        const db = unique("outage");
        await h.createDb(db);
        await h.cut();
        await expect(h.store.dbInfo(db)).rejects.toThrow();
        await expect(h.store.listDbs()).rejects.toThrow();
        await waitFor(() => source.status().connected === false, "status shows the outage");
        await h.restore();
        await h.store.bulkDocs(db, [{ _id: "after" }]);
        await waitFor(() => events.some((e) => e.type === "db-updated" && e.db === db), "events after the outage");
        await waitFor(() => source.status().connected, "status connected again");
        await h.deleteDb(db);
      } finally {
        await source.stop();
        await h.close();
      }
    });
  });
};
