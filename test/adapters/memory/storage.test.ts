/**
 * The storage model as a whole store: random sequences of writes, deletes and
 * compactions, checked against the rules of an append-only CouchDB file and
 * against a reference model of the changes feed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore } from "../../../src/adapters/memory/index.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";
import { createRandom } from "../../../src/adapters/memory/random.js";
import { storedBodyBytes } from "../../../src/adapters/memory/compression.js";
import { randomLetters } from "../../support/random-letters.js";

type Op =
  | { readonly type: "write"; readonly ids: readonly number[]; readonly size: number }
  | { readonly type: "delete"; readonly id: number }
  | { readonly type: "compact" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constant("write" as const), ids: fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 1, maxLength: 6 }), size: fc.integer({ min: 0, max: 400 }) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("delete" as const), id: fc.integer({ min: 0, max: 15 }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("compact" as const) }) },
);

interface Reference {
  readonly rev: string;
  readonly seq: number;
  readonly deleted: boolean;
}

const docId = (n: number): string => `doc-${n}`;

async function run(ops: readonly Op[], check: (store: MemoryStore, ref: Map<string, Reference>, op: Op, before: { fileBytes: number; seq: number }) => Promise<void>): Promise<void> {
  const scheduler = new VirtualScheduler();
  const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
  store.createDb("db");
  const ref = new Map<string, Reference>();
  for (const op of ops) {
    const info = await store.dbInfo("db");
    const before = { fileBytes: info?.fileBytes ?? 0, seq: info?.updateSeqNumber ?? 0 };
    if (op.type === "write") {
      // Duplicates within a batch: the second write of an id conflicts (it names a stale rev).
      const docs = op.ids.map((n) => ({ _id: docId(n), _rev: ref.get(docId(n))?.deleted === false ? ref.get(docId(n))?.rev : undefined, body: "y".repeat(op.size) }));
      const results = store.writeDocs("db", docs);
      // Each successful write takes the next seq, in order.
      let seq = before.seq;
      for (const result of results) if (result.ok) ref.set(result.id, { rev: result.rev, seq: ++seq, deleted: false });
    } else if (op.type === "delete") {
      const current = ref.get(docId(op.id));
      if (current !== undefined && !current.deleted) {
        const result = store.deleteDoc("db", docId(op.id), current.rev);
        expect(result.ok).toBe(true);
        if (result.ok) ref.set(docId(op.id), { rev: result.rev, seq: before.seq + 1, deleted: true });
      }
    } else {
      const handle = await store.startJob({ kind: "db", db: "db" });
      scheduler.runUntilIdle();
      expect(await handle.done).toMatchObject({ ok: true });
    }
    await check(store, ref, op, before);
  }
}

describe("memory store: storage model", () => {
  it("file only grows except by compaction; active <= file; seq grows by one per successful write", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (ops) => {
        await run(ops, async (store, ref, op, before) => {
          const info = await store.dbInfo("db");
          if (info === undefined) throw new Error("db vanished");
          expect(info.activeBytes).toBeLessThanOrEqual(info.fileBytes);
          if (op.type !== "compact") expect(info.fileBytes).toBeGreaterThanOrEqual(before.fileBytes);
          const maxSeq = Math.max(0, ...[...ref.values()].map((r) => r.seq));
          expect(info.updateSeqNumber).toBe(Math.max(before.seq, maxSeq));
          expect(info.updateSeq).toBe(String(info.updateSeqNumber));
          expect(info.docCount).toBe([...ref.values()].filter((r) => !r.deleted).length);
          expect(info.docDelCount).toBe([...ref.values()].filter((r) => r.deleted).length);
          if (op.type === "compact") {
            // Nothing written meanwhile: the file is the live data plus a small overhead.
            expect(info.fileBytes).toBeLessThanOrEqual(store.model.headerBytes + Math.ceil(info.activeBytes * (1 + store.model.compactedOverheadRatio)));
            expect(info.compactedSeqNumber).toBe(info.updateSeqNumber);
          }
        });
      }),
      { numRuns: 100 },
    );
  });

  it("updates and deletes leave garbage; compaction reclaims it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 10, max: 2000 }), async (docs, rounds, size) => {
        const scheduler = new VirtualScheduler();
        const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
        store.createDb("db");
        const revs = store.writeDocs("db", Array.from({ length: docs }, (_, i) => ({ _id: docId(i), v: "a".repeat(size) })));
        const fresh = await store.dbInfo("db");
        let current = revs.map((r) => (r.ok ? r.rev : ""));
        for (let round = 0; round < rounds; round++) {
          current = store.writeDocs("db", current.map((rev, i) => ({ _id: docId(i), _rev: rev, v: "b".repeat(size) }))).map((r) => (r.ok ? r.rev : ""));
        }
        const updated = await store.dbInfo("db");
        if (fresh === undefined || updated === undefined) throw new Error("db vanished");
        const garbage = (i: typeof fresh): number => i.fileBytes - i.activeBytes;
        // Every replaced body stays behind, as stored (compressed): "a" x size compresses to a few bytes.
        expect(garbage(updated)).toBeGreaterThan(garbage(fresh) + rounds * docs * storedBodyBytes(JSON.stringify({ v: "a".repeat(size) }), "snappy"));
        const handle = await store.startJob({ kind: "db", db: "db" });
        scheduler.runUntilIdle();
        const outcome = await handle.done;
        const compacted = await store.dbInfo("db");
        if (!outcome.ok || compacted === undefined) throw new Error("compaction failed");
        expect(outcome.reclaimedBytes).toBe(updated.fileBytes - compacted.fileBytes);
        expect(garbage(compacted)).toBeLessThan(garbage(updated));
      }),
      { numRuns: 50 },
    );
  });

  it("changes: one row per doc at its latest seq, since exclusive, limit and descending respected", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { maxLength: 30 }),
        fc.integer({ min: 0, max: 60 }),
        fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
        fc.boolean(),
        async (ops, since, limit, descending) => {
          let finalRef = new Map<string, Reference>();
          let store: MemoryStore | undefined;
          await run(ops, async (s, ref) => {
            store = s;
            finalRef = ref;
          });
          if (store === undefined) return;
          const page = await store.changes("db", { since: String(since), limit, descending });
          const expected = [...finalRef.entries()]
            .filter(([, r]) => r.seq > since)
            .sort(([, a], [, b]) => (descending ? b.seq - a.seq : a.seq - b.seq))
            .slice(0, limit ?? Infinity)
            .map(([id, r]) => ({ id, seq: String(r.seq), rev: r.rev, ...(r.deleted ? { deleted: true } : {}) }));
          expect(page.results).toEqual(expected);
          const seq = await store.currentSeq("db");
          const cut = limit !== undefined && expected.length === limit && [...finalRef.values()].filter((r) => r.seq > since).length > limit;
          if (!descending) expect(page.lastSeq).toBe(cut ? (expected[expected.length - 1]?.seq ?? String(since)) : seq);
          else expect(page.lastSeq).toBe(expected[expected.length - 1]?.seq ?? String(since));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("changes: since=now is the current seq; bad since and limit are rejected with the value named", async () => {
    const store = createMemoryStore({ scheduler: new VirtualScheduler(), autoIndexDelayMs: false });
    store.createDb("db");
    store.writeDocs("db", [{ _id: "a" }, { _id: "b" }]);
    expect(await store.changes("db", { since: "now" })).toEqual({ results: [], lastSeq: "2" });
    expect((await store.changes("db", { since: "1-g1AAAA" })).results.map((r) => r.id)).toEqual(["b"]);
    await expect(store.changes("db", { since: "yesterday" })).rejects.toThrow(/since="yesterday"/);
    await expect(store.changes("db", { limit: -1 })).rejects.toThrow(/limit=-1/);
    await expect(store.changes("missing", {})).rejects.toThrow(/not_found/);
  });

  it("calibration: the fixture workload lands near CouchDB 3.4.3's sizes, before and after compaction", async () => {
    // fixtures 21-25: 3000 docs (~138 B each), 5 update rounds in batches of 500, 1000 deletes.
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    store.createDb("fx_db");
    expect((await store.dbInfo("fx_db"))?.fileBytes).toBe(16_700);
    const body = (i: number) => ({ type: "item", n: i, name: `item-${String(i).padStart(5, "0")}`, payload: "x".repeat(70) });
    const revs = new Map<string, string>();
    const ids = Array.from({ length: 3000 }, (_, i) => `item-${String(i).padStart(5, "0")}`);
    for (const r of store.writeDocs("fx_db", ids.map((id, i) => ({ _id: id, ...body(i) })))) if (r.ok) revs.set(r.id, r.rev);
    for (let round = 0; round < 5; round++) {
      for (let b = 0; b < 3000; b += 500) {
        const batch = ids.slice(b, b + 500).map((id, i) => ({ _id: id, _rev: revs.get(id), ...body(i), round }));
        for (const r of store.writeDocs("fx_db", batch)) if (r.ok) revs.set(r.id, r.rev);
      }
    }
    const updated = await store.dbInfo("fx_db");
    expect(updated?.fileBytes).toBeGreaterThan(8_364_454 * 0.9);
    expect(updated?.fileBytes).toBeLessThan(8_364_454 * 1.1);
    expect(updated?.activeBytes).toBeGreaterThan(1_865_526 * 0.9);
    expect(updated?.activeBytes).toBeLessThan(1_865_526 * 1.1);
    store.writeDocs("fx_db", ids.slice(2000).map((id) => ({ _id: id, _rev: revs.get(id), _deleted: true })));
    const deleted = await store.dbInfo("fx_db");
    expect(deleted).toMatchObject({ docCount: 2000, docDelCount: 1000, updateSeqNumber: 19_000 });
    expect(deleted?.fileBytes).toBeGreaterThan(8_925_612 * 0.9);
    expect(deleted?.fileBytes).toBeLessThan(8_925_612 * 1.1);
    // Fixture 39: compacted, the past revisions are stubs, so active falls too (1,795,962 -> 1,374,353), and the file is about active.
    const handle = await store.startJob({ kind: "db", db: "fx_db" });
    scheduler.runUntilIdle();
    expect((await handle.done).ok).toBe(true);
    const compacted = await store.dbInfo("fx_db");
    expect(compacted?.activeBytes).toBeGreaterThan(1_374_353 * 0.95);
    expect(compacted?.activeBytes).toBeLessThan(1_374_353 * 1.05);
    expect(compacted?.fileBytes).toBeGreaterThan(1_405_362 * 0.95);
    expect(compacted?.fileBytes).toBeLessThan(1_405_362 * 1.05);
    // Compacted again with nothing written since: nothing more to stub, nothing reclaimed.
    const again = await store.startJob({ kind: "db", db: "fx_db" });
    scheduler.runUntilIdle();
    expect(await again.done).toMatchObject({ ok: true, reclaimedBytes: 0 });
    expect((await store.dbInfo("fx_db"))?.activeBytes).toBe(compacted?.activeBytes);
  });
  /**
   * A db of `docs` documents of `bodyBytes` random letters filled in batches
   * of 500 (consecutive ids), as on CouchDB in the measurements below (random
   * letters: snappy cannot shrink them, so the body costs its size).
   */
  async function filledDb(docs: number, bodyBytes: number) {
    const store = createMemoryStore({ scheduler: new VirtualScheduler(), autoIndexDelayMs: false });
    store.createDb("db");
    const random = createRandom(docs + bodyBytes);
    const letters = (n: number): string => randomLetters(random, n);
    const revs = new Map<string, string>();
    const ids = Array.from({ length: docs }, (_, i) => `doc${String(i).padStart(6, "0")}`);
    for (let b = 0; b < ids.length; b += 500) {
      for (const r of store.writeDocs("db", ids.slice(b, b + 500).map((id) => ({ _id: id, n: 0, body: letters(bodyBytes) })))) if (r.ok) revs.set(r.id, r.rev);
    }
    const fileBytes = async (): Promise<number> => (await store.dbInfo("db"))?.fileBytes ?? 0;
    /** Writes `batch` (one body of `length` random letters) and returns how much the file grew. */
    const update = async (batch: readonly string[], length = bodyBytes): Promise<number> => {
      const body = letters(length);
      const before = await fileBytes();
      const results = store.writeDocs("db", batch.map((id) => ({ _id: id, _rev: revs.get(id), n: 1, body })));
      for (const r of results) if (r.ok) revs.set(r.id, r.rev);
      expect(results.every((r) => r.ok)).toBe(true);
      return (await fileBytes()) - before;
    };
    return { ids, update };
  }

  it("calibration: a commit ends with its header at the next 4 KiB block, so a one-document write grows the file by a block", async () => {
    // Measured on CouchDB 3.4.3 (q=1): 2,000 docs of ~300 B, then one-document updates of bodies up to 340 B: +4,096 B each.
    const { ids, update } = await filledDb(2000, 250);
    for (const [round, id] of ids.slice(0, 40).entries()) expect(await update([id], 250 + round * 2)).toBe(4_096);
    // A bulk write grows it by whole blocks: the data, then padding, then the header.
    const grown = await update(ids.slice(100, 300));
    expect(grown % 4_096).toBe(0);
    expect(grown).toBeGreaterThan(4_096);
  });

  it("calibration: a one-document write in a deep tree, or of a big document, crosses into a second block", async () => {
    // CouchDB 3.4.3: 20,000 docs, 340 B bodies: +8,192 B per write, 40 of 40 (one more tree level to rewrite);
    // 50 docs: +4,096, 40 of 40; 2,000 docs with 1,000 B bodies: 8,192 in 38 of 40.
    const deep = await filledDb(20_000, 340);
    for (const id of deep.ids.slice(5000, 5010)) expect(await deep.update([id])).toBe(8_192);
    const small = await filledDb(50, 340);
    for (const id of small.ids.slice(0, 10)) expect(await small.update([id])).toBe(4_096);
    const big = await filledDb(2000, 1000);
    for (const id of big.ids.slice(700, 710)) expect(await big.update([id])).toBe(8_192);
  });

  it("calibration: a batch of random ids rewrites most leaves of both trees, a batch of consecutive ids few", async () => {
    // CouchDB 3.4.3, 20,000 docs of 250 random characters, batches of 200, bytes per update:
    // consecutive ids 532, random ids 1,836 (3.5x); 2,000 docs: 564 and 1,306 (2.3x).
    const { ids, update } = await filledDb(20_000, 250);
    const random = createRandom(7);
    let consecutiveBytes = 0;
    let randomBytes = 0;
    for (let round = 0; round < 10; round++) {
      consecutiveBytes += await update(ids.slice(round * 200, round * 200 + 200));
      const picked = new Set<string>();
      while (picked.size < 200) picked.add(ids[random.int(ids.length)]!);
      randomBytes += await update([...picked]);
    }
    expect(consecutiveBytes / 2000).toBeGreaterThan(532 * 0.85);
    expect(consecutiveBytes / 2000).toBeLessThan(532 * 1.15);
    expect(randomBytes / 2000).toBeGreaterThan(1836 * 0.85);
    expect(randomBytes / 2000).toBeLessThan(1836 * 1.15);
  });
});
