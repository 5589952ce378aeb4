/**
 * Geo index files: a restart restores an index without rebuilding it; a
 * corrupt or missing file is rebuilt from seq 0; files grow with churn and
 * compaction rewrites them as one snapshot.
 */
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/adapters/memory/index.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { waitFor } from "../support/wait-for.js";
import { idsOf, point, POINT_FN, put, startGeo, uniqueDb, type GeoHarness } from "./harness.js";

let dir: string;
const running: GeoHarness[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "upholster-geo-"));
});
afterEach(async () => {
  for (const h of running.splice(0)) await h.stop();
  await rm(dir, { recursive: true, force: true });
});

const WORLD = { bbox: "-180,-90,180,90" };

async function started(store: ReturnType<typeof createMemoryStore>): Promise<GeoHarness> {
  const h = await startGeo({ store, geo: { indexDir: dir } });
  running.push(h);
  return h;
}

describe("geo index files", () => {
  it("a restart restores the index from its file (no doc read again); a corrupt file is logged and rebuilt", async () => {
    const store = createMemoryStore({ scheduler: realScheduler({ unref: true }) });
    try {
      const db = uniqueDb("restart");
      store.createDb(db);
      const revs = new Map<string, string>();
      await put(store, db, [{ _id: "_design/g", st_indexes: { g: { index: POINT_FN } } }, ...Array.from({ length: 20 }, (_, i) => ({ _id: `p${i}`, geometry: point(i, 0) }))], revs);
      const ref = { db, ddoc: "_design/g", index: "g" };
      const first = await started(store);
      expect(idsOf(await first.search(ref, WORLD))).toHaveLength(20);
      // Changes after the snapshot go to the log, which a restart replays.
      await put(store, db, [{ _id: "p0", geometry: point(100, 50) }, { _id: "p1", _deleted: true }], revs);
      expect(idsOf(await first.search(ref, { bbox: "99,49,101,51" }))).toEqual(["p0"]);
      await first.stop();

      const second = await started(store);
      const answer = await second.search(ref, WORLD);
      expect(idsOf(answer)).toHaveLength(19);
      expect(idsOf(await second.search(ref, { bbox: "99,49,101,51" }))).toEqual(["p0"]);
      expect(second.upholster.geo.manager.counters).toMatchObject({ restored: 1, docsRun: 0, corruptFiles: 0 });
      await second.stop();

      const [dbDir] = await readdir(dir);
      const [file] = await readdir(join(dir, dbDir!));
      await writeFile(join(dir, dbDir!, file!), "not a geo index at all");
      const third = await started(store);
      expect(idsOf(await third.search(ref, WORLD))).toHaveLength(19);
      expect(third.upholster.geo.manager.counters).toMatchObject({ restored: 0, corruptFiles: 1, docsRun: 19 });
      expect(third.logger.find("corrupt").length).toBe(1);
      await third.stop();

      await rm(join(dir, dbDir!, file!));
      const fourth = await started(store);
      expect(idsOf(await fourth.search(ref, WORLD))).toHaveLength(19);
      expect(fourth.upholster.geo.manager.counters).toMatchObject({ restored: 0, docsRun: 19 });
    } finally {
      store.close();
    }
  });

  it("a file ahead of its db (deleted and created again while upholster was down) is rebuilt, not served", async () => {
    const store = createMemoryStore({ scheduler: realScheduler({ unref: true }) });
    try {
      const db = uniqueDb("recreated");
      store.createDb(db);
      const ddoc = { _id: "_design/g", st_indexes: { g: { index: POINT_FN } } };
      await put(store, db, [ddoc, ...Array.from({ length: 10 }, (_, i) => ({ _id: `old${i}`, geometry: point(i, 0) }))], new Map());
      const ref = { db, ddoc: "_design/g", index: "g" };
      const first = await started(store);
      expect(idsOf(await first.search(ref, WORLD))).toHaveLength(10);
      await first.stop();

      await store.deleteDb(db);
      store.createDb(db);
      await put(store, db, [ddoc, { _id: "new0", geometry: point(1, 1) }], new Map());
      const second = await started(store);
      expect(idsOf(await second.search(ref, WORLD))).toEqual(["new0"]);
      expect(second.upholster.geo.manager.counters).toMatchObject({ restored: 0, corruptFiles: 1 });
      expect(second.logger.find("ahead of its db").length).toBe(1);
    } finally {
      store.close();
    }
  });

  it("the file grows with churn (fileBytes > activeBytes, growth reported) and compaction shrinks it; the result survives a restart", async () => {
    const store = createMemoryStore({ scheduler: realScheduler({ unref: true }) });
    try {
      const db = uniqueDb("churn");
      store.createDb(db);
      const revs = new Map<string, string>();
      await put(store, db, [{ _id: "_design/g", st_indexes: { g: { index: POINT_FN } } }], revs);
      const ref = { db, ddoc: "_design/g", index: "g" };
      const h = await started(store);
      const grown: string[] = [];
      h.upholster.geo.files.onGrowth((grownDb, signature) => grown.push(`${grownDb}/${signature}`));
      for (let round = 0; round < 6; round++) {
        await put(store, db, Array.from({ length: 40 }, (_, i) => ({ _id: `d${i}`, geometry: point(i, round) })), revs);
        await h.search(ref, WORLD);
      }
      const [before] = await h.upholster.geo.files.files(db);
      expect(before!.fileBytes).toBeGreaterThan(3 * before!.activeBytes);
      expect(grown.length).toBeGreaterThan(0);
      const outcome = await (await h.upholster.geo.files.compact(db, before!.signature)).done;
      expect(outcome).toMatchObject({ ok: true });
      const after = await h.upholster.geo.files.file(db, before!.signature);
      expect(after!.fileBytes).toBeLessThan(before!.fileBytes / 3);
      expect(after!.fileBytes).toBeLessThanOrEqual(after!.activeBytes + 256);
      await h.stop();
      const again = await started(store);
      expect(idsOf(await again.search(ref, { bbox: "0,5,100,5" }))).toHaveLength(40);
      expect(again.upholster.geo.manager.counters.docsRun).toBe(0);
      await waitFor(async () => (await again.upholster.geo.files.files(db)).length === 1, "the file listed");
    } finally {
      store.close();
    }
  });
});
