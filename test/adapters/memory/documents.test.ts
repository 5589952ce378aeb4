import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStore, dbNameProblem } from "../../../src/adapters/memory/index.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";

const newStore = () => createMemoryStore({ scheduler: new VirtualScheduler(), autoIndexDelayMs: false });

describe("memory store: documents and MVCC", () => {
  it("creates, updates with the current rev, and reports conflicts for stale or missing revs", async () => {
    const store = newStore();
    store.createDb("db");
    const created = store.putDoc("db", { _id: "a", v: 1 });
    if (!created.ok) throw new Error("create failed");
    expect(created.rev).toMatch(/^1-[0-9a-f]{32}$/);
    expect(store.putDoc("db", { _id: "a", v: 2 })).toMatchObject({ ok: false, error: "conflict" });
    const updated = store.putDoc("db", { _id: "a", _rev: created.rev, v: 2 });
    if (!updated.ok) throw new Error("update failed");
    expect(updated.rev).toMatch(/^2-/);
    expect(store.putDoc("db", { _id: "a", _rev: created.rev, v: 3 })).toMatchObject({ ok: false, error: "conflict" });
    expect(store.putDoc("db", { _id: "zz", _rev: "1-abc", v: 3 })).toMatchObject({ ok: false, error: "conflict" });
    expect(await store.getDoc("db", "a")).toEqual({ _id: "a", _rev: updated.rev, v: 2 });
    const deleted = store.deleteDoc("db", "a", updated.rev);
    expect(deleted).toMatchObject({ ok: true });
    expect(await store.getDoc("db", "a")).toBeUndefined();
    // Recreating over a tombstone needs no rev and continues the generation count, as in CouchDB.
    expect(store.putDoc("db", { _id: "a", v: 4 })).toMatchObject({ ok: true, rev: expect.stringMatching(/^4-/) });
  });

  it("a stored document is a value: changing the object written, or one read, changes nothing stored", async () => {
    const store = newStore();
    store.createDb("db");
    const written = { _id: "a", nested: { x: 1 }, list: [1, 2] };
    const created = store.putDoc("db", written);
    if (!created.ok) throw new Error("create failed");
    written.nested.x = 2;
    written.list.push(3);
    const read = await store.getDoc("db", "a");
    expect(read).toEqual({ _id: "a", _rev: created.rev, nested: { x: 1 }, list: [1, 2] });
    (read as unknown as { nested: { x: number } }).nested.x = 3;
    expect(await store.getDoc("db", "a")).toEqual({ _id: "a", _rev: created.rev, nested: { x: 1 }, list: [1, 2] });
  });

  it("keeps a field named __proto__ as a field (a JSON body may have one), and stores values as JSON does", async () => {
    const store = newStore();
    store.createDb("db");
    const doc = JSON.parse('{"_id":"p","__proto__":{"polluted":true},"when":null}') as { _id: string };
    const created = store.putDoc("db", { ...doc, at: new Date(Date.UTC(2026, 0, 2)), gone: undefined });
    if (!created.ok) throw new Error("create failed");
    const read = (await store.getDoc("db", "p")) as Record<string, unknown>;
    expect(Object.keys(read).sort()).toEqual(["__proto__", "_id", "_rev", "at", "when"]);
    expect(Object.getOwnPropertyDescriptor(read, "__proto__")?.value).toEqual({ polluted: true });
    expect(read["at"]).toBe("2026-01-02T00:00:00.000Z");
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("revisions are deterministic: the same edits give the same revs", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ id: fc.constantFrom("a", "b", "c"), value: fc.jsonValue() }), { maxLength: 20 }), (edits) => {
        const play = () => {
          const store = newStore();
          store.createDb("db");
          const revs = new Map<string, string>();
          return edits.map(({ id, value }) => {
            const result = store.putDoc("db", { _id: id, _rev: revs.get(id), value });
            if (result.ok) revs.set(id, result.rev);
            return result;
          });
        };
        expect(play()).toEqual(play());
      }),
      { numRuns: 50 },
    );
  });

  it("bulkDocs reports per-doc results and never throws for bad docs", async () => {
    const store = newStore();
    await store.ensureDb("db");
    await store.ensureDb("db");
    const results = await store.bulkDocs("db", [
      { _id: "ok" },
      { _id: "_bad" },
      { _id: "_local/x" },
      { _id: "" },
      { _id: "r", _rev: "not-a-rev" },
      { _id: 42 } as unknown as { _id: string },
      { _id: "_design/d", views: {} },
      { _id: "ok" },
    ]);
    expect(results.map((r) => (r.ok ? "ok" : r.error))).toEqual(["ok", "illegal_docid", "illegal_docid", "illegal_docid", "bad_request", "bad_request", "ok", "conflict"]);
    const cyclic: Record<string, unknown> = { _id: "cyclic" };
    cyclic["self"] = cyclic;
    expect((await store.bulkDocs("db", [cyclic as { _id: string }]))[0]).toMatchObject({ ok: false, error: "bad_request" });
    await expect(store.bulkDocs("missing", [{ _id: "x" }])).rejects.toThrow(/not_found/);
    expect(store.writeDocs("missing", [{ _id: "x" }])).toEqual([{ id: "x", ok: false, error: "not_found", reason: "Database does not exist." }]);
  });

  it("db names follow CouchDB's rules", () => {
    const store = newStore();
    for (const good of ["a", "abc-1_$()+/x", "_users", "_replicator", "_global_changes", "team/_users"]) {
      expect(dbNameProblem(good)).toBeUndefined();
      expect(store.createDb(good)).toEqual({ ok: true });
    }
    for (const bad of ["", "A", "1abc", "_private", "has space", "é", "a".repeat(239)]) {
      expect(store.createDb(bad)).toMatchObject({ ok: false, error: "illegal_database_name" });
    }
    expect(store.createDb("a")).toMatchObject({ ok: false, error: "file_exists" });
    expect(dbNameProblem(7)).toMatch(/string/);
  });

  it("design docs are listed, counted in doc_count, and gone when deleted", async () => {
    const store = newStore();
    store.createDb("db");
    const put = store.putDesignDoc("db", "views", { views: { v: { map: "function(doc){}" } } });
    store.putDesignDoc("db", "_design/other", { validate_doc_update: "function(){}" });
    expect((await store.designDocs("db")).map((d) => d.id)).toEqual(["_design/other", "_design/views"]);
    expect((await store.dbInfo("db"))?.docCount).toBe(2);
    if (put.ok) store.deleteDoc("db", "_design/views", put.rev);
    expect((await store.designDocs("db")).map((d) => d.id)).toEqual(["_design/other"]);
    expect(await store.designDocs("missing")).toEqual([]);
  });

  it("a db created in an old disk format needs an upgrade until compacted", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    store.createDb("old", { diskFormatVersion: 7 });
    expect(await store.dbInfo("old")).toMatchObject({ diskFormatVersion: 7, needsUpgrade: true });
    const handle = await store.startJob({ kind: "db", db: "old" });
    scheduler.runUntilIdle();
    await handle.done;
    expect(await store.dbInfo("old")).toMatchObject({ diskFormatVersion: 8, needsUpgrade: false });
  });

  it("listDbs is sorted; dbInfos skips missing dbs; deleted dbs are gone", async () => {
    const store = newStore();
    for (const name of ["c", "a", "b"]) store.createDb(name);
    expect(await store.listDbs()).toEqual(["a", "b", "c"]);
    expect([...(await store.dbInfos(["a", "zz", "c"])).keys()]).toEqual(["a", "c"]);
    expect(store.deleteDb("b")).toBe(true);
    expect(store.deleteDb("b")).toBe(false);
    expect(await store.dbInfo("b")).toBeUndefined();
  });
});
