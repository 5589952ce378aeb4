/**
 * Geo indexes end to end on the memory store through createUpholster: the
 * background indexer builds them, GeoService answers; updates move docs,
 * deletions take them out; one index per signature; stale; cleanup; sizes.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { GeoError } from "../../src/ports/geo.js";
import { waitFor } from "../support/wait-for.js";
import { idsOf, LAZY_CONFIG, point, POINT_FN, put, startGeo, uniqueDb, type GeoHarness } from "./harness.js";

let harness: GeoHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness?.store.close();
  harness = undefined;
});

const WORLD = { bbox: "-180,-90,180,90" };

/** Waits until the background indexer has brought the index to the db's seq (a stale query never builds). */
async function built(h: GeoHarness, db: string, ddoc: string, index: string): Promise<void> {
  await waitFor(async () => {
    const info = await h.upholster.geo.service.info({ db, ddoc, index });
    return info.geo_index.update_seq >= Number(await h.store.currentSeq(db)) && !info.geo_index.updater_running;
  }, `geo index ${ddoc}/${index} of ${db} built`);
}

describe("geo indexing on the memory store", () => {
  it("the background indexer builds an index; queries find docs; an update moves a doc, a deletion takes it out", async () => {
    const h = (harness = await startGeo());
    const db = uniqueDb("basic");
    h.store.createDb(db);
    const revs = new Map<string, string>();
    await put(h.store, db, [{ _id: "_design/geo", st_indexes: { pts: { index: POINT_FN } } }], revs);
    await put(h.store, db, [{ _id: "a", geometry: point(1, 1) }, { _id: "b", geometry: point(10, 10) }, { _id: "c", other: true }, { _id: "d", geometry: point(-5, 2) }], revs);
    await built(h, db, "_design/geo", "pts");
    const ref = { db, ddoc: "_design/geo", index: "pts" };
    expect(idsOf(await h.search(ref, { ...WORLD, stale: "ok" }))).toEqual(["a", "b", "d"]);
    expect(idsOf(await h.search(ref, { bbox: "0,0,2,2", stale: "ok" }))).toEqual(["a"]);

    await put(h.store, db, [{ _id: "a", geometry: point(50, 50) }, { _id: "b", _deleted: true }], revs);
    // The default waits for the index to reach the db's seq of now.
    expect(idsOf(await h.search(ref, { bbox: "0,0,2,2" }))).toEqual([]);
    expect(idsOf(await h.search(ref, WORLD))).toEqual(["a", "d"]);
    const withDocs = await h.search(ref, { bbox: "49,49,51,51", include_docs: "true" });
    expect(withDocs.docs("a")).toMatchObject({ _id: "a", geometry: point(50, 50) });
  });

  it("missing db, design doc and index are 404s naming what is missing; a bad definition is a 400", async () => {
    const h = (harness = await startGeo());
    const db = uniqueDb("missing");
    h.store.createDb(db);
    await put(h.store, db, [{ _id: "_design/geo", st_indexes: { pts: { index: POINT_FN }, bad: { index: POINT_FN, dimensions: 9 } } }], new Map());
    const fail = (ref: { db: string; ddoc: string; index: string }) => h.search(ref, WORLD).then(() => undefined, (e: unknown) => e);
    const noIndex = await fail({ db, ddoc: "_design/geo", index: "nope" });
    expect(noIndex).toBeInstanceOf(GeoError);
    expect(noIndex).toMatchObject({ status: 404, error: "not_found", reason: "Geospatial index 'nope' not found" });
    expect(await fail({ db, ddoc: "_design/none", index: "pts" })).toMatchObject({ status: 404, reason: "missing" });
    expect(await fail({ db: "geo_no_such_db", ddoc: "_design/geo", index: "pts" })).toMatchObject({ status: 404, reason: "Database does not exist." });
    expect(await fail({ db, ddoc: "_design/geo", index: "bad" })).toMatchObject({ status: 400, reason: expect.stringContaining("dimensions = 9") });
  });

  it("property: after random writes, updates and deletions the index holds exactly the docs with a geometry, where they are", async () => {
    const h = (harness = await startGeo());
    type Op = { readonly id: number; readonly kind: "point" | "none" | "delete" | "invalid"; readonly x: number; readonly y: number };
    const opArb: fc.Arbitrary<Op> = fc.record({
      id: fc.integer({ min: 0, max: 7 }),
      kind: fc.constantFrom("point", "point", "none", "delete", "invalid"),
      x: fc.integer({ min: -170, max: 170 }),
      y: fc.integer({ min: -80, max: 80 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(opArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }), async (batches) => {
        const db = uniqueDb("prop");
        h.store.createDb(db);
        const revs = new Map<string, string>();
        await put(h.store, db, [{ _id: "_design/g", st_indexes: { g: { index: POINT_FN } } }], revs);
        const expected = new Map<string, readonly [number, number]>();
        for (const batch of batches) {
          const last = new Map(batch.map((op) => [`d${op.id}`, op]));
          for (const [id, op] of last) {
            if (op.kind === "delete") {
              if (revs.has(id)) await put(h.store, db, [{ _id: id, _deleted: true }], revs);
              expected.delete(id);
            } else {
              const geometry = op.kind === "point" ? point(op.x, op.y) : op.kind === "invalid" ? { type: "Point", coordinates: [op.x] } : undefined;
              await put(h.store, db, [{ _id: id, ...(geometry === undefined ? {} : { geometry }) }], revs);
              if (op.kind === "point") expected.set(id, [op.x, op.y]);
              else expected.delete(id);
            }
          }
          const answer = await h.search({ db, ddoc: "_design/g", index: "g" }, WORLD);
          const found = new Map(answer.page.hits.map((hit) => [hit.id, (hit.geometry as unknown as { coordinates: [number, number] }).coordinates]));
          expect(found).toEqual(new Map([...expected].map(([id, xy]) => [id, [...xy]])));
        }
      }),
      { seed: 4242, numRuns: 12 },
    );
  });

  it("design docs with the same definition share one index, built once", async () => {
    const h = (harness = await startGeo());
    const db = uniqueDb("shared");
    h.store.createDb(db);
    const revs = new Map<string, string>();
    await put(h.store, db, Array.from({ length: 30 }, (_, i) => ({ _id: `p${i}`, geometry: point(i, i) })), revs);
    await put(h.store, db, [
      { _id: "_design/one", st_indexes: { here: { index: POINT_FN } } },
      { _id: "_design/two", st_indexes: { there: { index: POINT_FN, srid: "urn:ogc:def:crs:EPSG::4326" } } },
    ], revs);
    await built(h, db, "_design/one", "here");
    await built(h, db, "_design/two", "there");
    expect(h.upholster.geo.manager.openSignatures(db)).toHaveLength(1);
    expect(h.upholster.geo.manager.counters.docsRun).toBe(30);
    expect(idsOf(await h.search({ db, ddoc: "_design/two", index: "there" }, { bbox: "0,0,2.5,2.5", stale: "ok" }))).toEqual(["p0", "p1", "p2"]);
    const [file] = await h.upholster.geo.files.files(db);
    expect(file?.ddocs).toEqual(["_design/one", "_design/two"]);
  });

  it("stale=ok answers at once from what is indexed; the default waits for the db's seq", async () => {
    const h = (harness = await startGeo({ config: LAZY_CONFIG }));
    const db = uniqueDb("stale");
    h.store.createDb(db);
    const revs = new Map<string, string>();
    await put(h.store, db, [{ _id: "old", geometry: point(1, 1) }, { _id: "_design/g", st_indexes: { g: { index: POINT_FN } } }], revs);
    await built(h, db, "_design/g", "g");
    // Plain writes are looked at only after an hour here: nothing builds them but the query.
    await put(h.store, db, [{ _id: "new", geometry: point(2, 2) }], revs);
    const ref = { db, ddoc: "_design/g", index: "g" };
    const stale = await h.search(ref, { ...WORLD, stale: "ok" });
    expect(idsOf(stale)).toEqual(["old"]);
    expect(stale.indexSeq).toBeLessThan(Number(await h.store.currentSeq(db)));
    const fresh = await h.search(ref, WORLD);
    expect(idsOf(fresh)).toEqual(["new", "old"]);
    expect(fresh.indexSeq).toBe(Number(await h.store.currentSeq(db)));
  });

  it("a function that throws skips the doc (logged); one that loops is stopped, and the other indexes still build", async () => {
    const h = (harness = await startGeo({ geo: { sandboxLimits: { timeoutMsPerDoc: 50 } } }));
    const db = uniqueDb("bad");
    h.store.createDb(db);
    const revs = new Map<string, string>();
    const throwing = "function (doc) { if (doc.bad) { throw new Error('bad doc'); } if (doc.geometry) st_index(doc.geometry); }";
    const looping = "function (doc) { if (doc.loop) { while (true) {} } if (doc.geometry) st_index(doc.geometry); }";
    const invalid = "function (doc) { if (doc.geometry) st_index({ type: 'Point', coordinates: [doc.geometry.coordinates[0]] }); }";
    await put(h.store, db, [
      { _id: "ok1", geometry: point(1, 1) },
      { _id: "bad1", bad: true, geometry: point(2, 2) },
      ...Array.from({ length: 4 }, (_, i) => ({ _id: `loop${i}`, loop: true, geometry: point(3, 3) })),
      { _id: "_design/t", st_indexes: { t: { index: throwing } } },
      { _id: "_design/l", st_indexes: { l: { index: looping } } },
      { _id: "_design/i", st_indexes: { i: { index: invalid } } },
    ], revs);
    await built(h, db, "_design/t", "t");
    expect(idsOf(await h.search({ db, ddoc: "_design/t", index: "t" }, { ...WORLD, stale: "ok" }))).toEqual(["loop0", "loop1", "loop2", "loop3", "ok1"]);
    expect(h.logger.find("left out of its geo index").some((line) => line.fields["docId"] === "bad1" && String(line.fields["reason"]).includes("bad doc"))).toBe(true);
    await built(h, db, "_design/i", "i");
    expect(h.logger.find("left out of its geo index").some((line) => line.fields["kind"] === "geometry")).toBe(true);
    await waitFor(() => h.logger.find("no longer runs").length > 0, "the looping function stopped");
    const looped = await h.search({ db, ddoc: "_design/l", index: "l" }, WORLD).then(() => undefined, (e: unknown) => e);
    expect(looped).toMatchObject({ status: 500, error: "geo_index_error" });
  });

  it("cleanup removes the indexes whose signature no design doc uses", async () => {
    const h = (harness = await startGeo());
    const db = uniqueDb("cleanup");
    h.store.createDb(db);
    const revs = new Map<string, string>();
    await put(h.store, db, [{ _id: "x", geometry: point(1, 1) }, { _id: "_design/g", st_indexes: { a: { index: POINT_FN }, b: { index: POINT_FN, dimensions: 3 } } }], revs);
    await built(h, db, "_design/g", "a");
    await built(h, db, "_design/g", "b");
    expect(h.upholster.geo.manager.openSignatures(db)).toHaveLength(2);
    await put(h.store, db, [{ _id: "_design/g", st_indexes: { a: { index: POINT_FN } } }], revs);
    await h.upholster.geo.service.cleanup(db);
    expect(h.upholster.geo.manager.openSignatures(db)).toHaveLength(1);
    expect(await h.upholster.geo.files.files(db)).toHaveLength(1);
  });

  it("a deleted db's indexes are dropped", async () => {
    const h = (harness = await startGeo());
    const db = uniqueDb("dropped");
    h.store.createDb(db);
    await put(h.store, db, [{ _id: "x", geometry: point(1, 1) }, { _id: "_design/g", st_indexes: { a: { index: POINT_FN } } }], new Map());
    await built(h, db, "_design/g", "a");
    h.store.deleteDb(db);
    await waitFor(() => h.upholster.geo.manager.openSignatures(db).length === 0, "indexes of the deleted db dropped");
  });

  it("in memory: the file model grows with churn and compaction brings it back to the live data", async () => {
    const h = (harness = await startGeo());
    const db = uniqueDb("sizes");
    h.store.createDb(db);
    const revs = new Map<string, string>();
    await put(h.store, db, [{ _id: "_design/g", st_indexes: { g: { index: POINT_FN } } }], revs);
    const ref = { db, ddoc: "_design/g", index: "g" };
    for (let round = 0; round < 6; round++) {
      await put(h.store, db, Array.from({ length: 50 }, (_, i) => ({ _id: `d${i}`, geometry: point(i, round) })), revs);
      await h.search(ref, WORLD);
    }
    const [before] = await h.upholster.geo.files.files(db);
    expect(before!.fileBytes).toBeGreaterThan(3 * before!.activeBytes);
    const outcome = await (await h.upholster.geo.files.compact(db, before!.signature)).done;
    expect(outcome.ok).toBe(true);
    const after = await h.upholster.geo.files.file(db, before!.signature);
    expect(after!.fileBytes).toBeLessThan(before!.fileBytes / 3);
    expect(idsOf(await h.search(ref, { bbox: "0,5,100,5" }))).toHaveLength(50);
  });
});
