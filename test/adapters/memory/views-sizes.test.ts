/**
 * View index sizes against CouchDB 3.4.3's (test/fixtures/couchdb-3.4.3-views,
 * `sizes-*`): the same 3000 docs and two views, written in four rounds (the
 * first inserts, the others update every doc), the index brought up to date
 * after each round, then compacted. The model (storage-model.ts) is a model:
 * `external` (JSON bytes of the rows) is close to CouchDB's; `active` and the
 * file within the tolerance its comment states; the shape (the file grows by
 * each round's rewrite, active stays, compaction falls to ~active) exactly.
 * A second test takes keys in random order, measured on the same server
 * without a fixture (docs/benchmarks.md, "Leaves in bytes").
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../../src/adapters/memory/index.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";
import { createRandom } from "../../../src/adapters/memory/random.js";
import { randomLetters } from "../../support/random-letters.js";

const dir = join(import.meta.dirname, "../../fixtures/couchdb-3.4.3-views");
const recorded = (name: string): { file: number; active: number; external: number } => {
  const file = readdirSync(dir).find((f) => f.endsWith(`-${name}.json`));
  if (file === undefined) throw new Error(`no fixture ${name}`);
  return (JSON.parse(readFileSync(join(dir, file), "utf8")) as { response: { body: { view_index: { sizes: { file: number; active: number; external: number } } } } }).response.body.view_index.sizes;
};

/** As record.ts writes them. */
const docsOfRound = (round: number, revs: Map<string, string>): Record<string, unknown>[] =>
  Array.from({ length: 3000 }, (_, i) => {
    const id = `item-${String(i).padStart(5, "0")}`;
    return { _id: id, ...(revs.has(id) ? { _rev: revs.get(id) } : {}), type: `t${i % 4}`, n: i, round, text: `text ${i} round ${round} lorem ipsum` };
  });

const within = (ours: number, theirs: number, tolerance: number): void => {
  expect(Math.abs(ours - theirs) / theirs, `${ours} vs CouchDB's ${theirs}`).toBeLessThanOrEqual(tolerance);
};

describe("memory store view sizes, calibrated on CouchDB 3.4.3", () => {
  const scheduler = new VirtualScheduler();
  const store = createMemoryStore({ scheduler });
  afterAll(() => store.close());

  it("a build, three rounds of updates and a view compaction", async () => {
    store.createDb("sizes");
    store.putDesignDoc("sizes", "s", {
      views: { by_n: { map: "function (doc) { emit(doc.n, null); }" }, by_type: { map: "function (doc) { emit([doc.type, doc._id], doc.text); }" } },
    });
    const revs = new Map<string, string>();
    const ours = [];
    for (let round = 0; round < 4; round++) {
      for (const result of store.writeDocs("sizes", docsOfRound(round, revs))) if (result.ok) revs.set(result.id, result.rev);
      await store.updateViewGroup("sizes", "_design/s");
      ours.push((await store.viewGroupInfo("sizes", "_design/s")).view_index.sizes);
    }
    const theirs = [0, 1, 2, 3].map((round) => recorded(`sizes-info-round-${round}`));
    if (process.env.SIZES_VERBOSE !== undefined) console.log(JSON.stringify({ ours, theirs }));
    for (let round = 0; round < 4; round++) {
      within(ours[round]!.external, theirs[round]!.external, 0.02);
      within(ours[round]!.active, theirs[round]!.active, 0.15);
    }
    within(ours[0]!.file, theirs[0]!.file, 0.15);
    within(ours[3]!.file, theirs[3]!.file, 0.25);
    // Each round appends its rewrite: the file grows, active does not.
    for (let round = 1; round < 4; round++) {
      expect(ours[round]!.file).toBeGreaterThan(ours[round - 1]!.file);
      within(ours[round]!.active, ours[0]!.active, 0.01);
    }
    const job = await store.startJob({ kind: "view", db: "sizes", ddoc: "_design/s" });
    await scheduler.runUntilIdleAsync();
    expect(await job.done).toMatchObject({ ok: true });
    const compacted = (await store.viewGroupInfo("sizes", "_design/s")).view_index.sizes;
    const theirsCompacted = recorded("sizes-info-after-compaction");
    within(compacted.file / compacted.active, theirsCompacted.file / theirsCompacted.active, 0.03);
    within(compacted.file, theirsCompacted.file, 0.15);
  });

  it("random keys: each writer chunk rewrites most leaves, as CouchDB's view updater does", async () => {
    // CouchDB 3.4.3 (q=1), 2,000 docs, `emit(doc.n, null)` with n random below 10^6, built, then updates of
    // random docs with a new random n, each followed by a query (docs/benchmarks.md, "Leaves in bytes"):
    // build 240,947-300,076 B of file; per index update 14,077 B (10 docs) and 81,111 B (200 docs).
    const random = createRandom(11);
    store.createDb("spread");
    store.putDesignDoc("spread", "d", { views: { v: { map: "function (doc) { emit(doc.n, null); }" } } });
    const ids = Array.from({ length: 2000 }, (_, i) => `doc${String(i).padStart(6, "0")}`);
    const revs = new Map<string, string>();
    const write = (batch: readonly string[]): void => {
      for (const r of store.writeDocs("spread", batch.map((id) => ({ _id: id, _rev: revs.get(id), n: random.int(1_000_000) })))) if (r.ok) revs.set(r.id, r.rev);
    };
    for (let b = 0; b < ids.length; b += 500) write(ids.slice(b, b + 500));
    const fileBytes = async (): Promise<number> => {
      await store.updateViewGroup("spread", "_design/d");
      return (await store.viewGroupInfo("spread", "_design/d")).view_index.sizes.file;
    };
    const built = await fileBytes();
    within(built, 270_000, 0.25);
    const perUpdate = async (batch: number, rounds: number): Promise<number> => {
      const before = await fileBytes();
      for (let round = 0; round < rounds; round++) {
        const picked = new Set<string>();
        while (picked.size < batch) picked.add(ids[random.int(ids.length)]!);
        write([...picked]);
        await fileBytes();
      }
      return ((await fileBytes()) - before) / rounds;
    };
    within(await perUpdate(10, 20), 14_077, 0.2);
    within(await perUpdate(200, 5), 81_111, 0.25);
  });

  it("rows live at what their leaves compress to: random text at its size, numbers and ids with shared prefixes at about half", async () => {
    // CouchDB 3.4.3 (q=1), 2,000 docs built (docs/benchmarks.md, "Compressed rows"): `emit(doc.n, null)` 54,566 B
    // of live index (27 B a row for ~19 B of JSON), `emit(doc.n, doc.body)` with 250 random letters 612,199 B (306 B a row).
    const random = createRandom(12);
    const letters = (): string => randomLetters(random, 250);
    store.createDb("rows");
    store.putDesignDoc("rows", "d", { views: { small: { map: "function (doc) { emit(doc.n, null); }" }, big: { map: "function (doc) { emit(doc.n, doc.body); }" } } });
    store.putDesignDoc("rows", "s", { views: { small: { map: "function (doc) { emit(doc.n, null); }" } } });
    const ids = Array.from({ length: 2000 }, (_, i) => `doc${String(i).padStart(6, "0")}`);
    for (let b = 0; b < ids.length; b += 500) store.writeDocs("rows", ids.slice(b, b + 500).map((id) => ({ _id: id, n: random.int(1_000_000), body: letters() })));
    const activeOf = async (ddoc: string): Promise<number> => {
      await store.updateViewGroup("rows", ddoc);
      return (await store.viewGroupInfo("rows", ddoc)).view_index.sizes.active;
    };
    const small = await activeOf("_design/s");
    within(small, 54_566, 0.2);
    within((await activeOf("_design/d")) - small, 612_199, 0.1);
  });
});
