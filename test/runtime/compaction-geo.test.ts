/**
 * The compaction daemon and geo index files: a real geo engine (GeoIndex,
 * through test/support/geo-files.ts) churned on a virtual clock, found by
 * its growth notices or by the start-up rescan, compacted in a view channel.
 */
import { describe, expect, it } from "vitest";
import type { GeoIndexFiles } from "../../src/ports/geo.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";
import { createMemoryGeoFiles, type GeoDocChange, type MemoryGeoFiles } from "../support/geo-files.js";
import { advanceUntil, makeWorld, START_MS, type World } from "./world.js";

const DB = "places";
const SIGNATURE = "3f9a0c1d";
const DOCS = 1000;

/** A 40-vertex line per doc (about 500 bytes a record), moved a little each round: every round is garbage for the last. */
const round = (n: number): GeoDocChange[] =>
  Array.from({ length: DOCS }, (_, i) => ({
    id: `road-${String(i).padStart(5, "0")}`,
    rev: `${n + 1}-r`,
    geometries: [{ type: "LineString", coordinates: Array.from({ length: 40 }, (_, k) => [(i % 100) + k / 100, Math.floor(i / 100) + n / 10]) }],
  }));

/** Apply a round in batches of 100, as an indexer commits (one growth notice a batch). */
const churn = (geo: MemoryGeoFiles, n: number): void => {
  const changes = round(n);
  for (let at = 0; at < changes.length; at += 100) geo.apply(DB, SIGNATURE, changes.slice(at, at + 100), n * DOCS + at + 100);
};

const geoWorld = (wrap: (geo: MemoryGeoFiles) => GeoIndexFiles = (geo) => geo): { world: World; geo: MemoryGeoFiles } => {
  const scheduler = new VirtualScheduler({ startMs: START_MS });
  const geo = createMemoryGeoFiles({ timers: scheduler });
  geo.define(DB, SIGNATURE, ["_design/roads"]);
  return { world: makeWorld({ scheduler, geoFiles: wrap(geo) }), geo };
};

const fileOf = async (geo: MemoryGeoFiles) => (await geo.file(DB, SIGNATURE))!;

describe("compaction daemon with geo index files", () => {
  it("compacts a geo file that grows while it runs (growth notices), in a view channel, down to about its live data", async () => {
    const { world, geo } = geoWorld();
    await world.daemon.start();
    expect(geo.listenerCount()).toBe(1);
    let rounds = 0;
    const compacted = await advanceUntil(
      world,
      () => {
        if (world.daemon.metrics().finished >= 1) return true;
        churn(geo, rounds++);
        return false;
      },
      10_000,
      120,
    );
    expect(compacted).toBe(true);
    expect(world.jobCalls.map((c) => c.object)).toEqual([{ kind: "geo", db: DB, signature: SIGNATURE }]);
    const enqueued = world.logger.find("smoosh: enqueued").map((l) => [l.fields["channel"], l.fields["object"]]);
    expect(enqueued).toContainEqual(["ratio_views", `${DB} _geo/${SIGNATURE}`]);
    const after = await fileOf(geo);
    expect(after.compactionRunning).toBe(false);
    expect(after.fileBytes / after.activeBytes).toBeLessThan(1.01);
    expect(world.daemon.metrics().bytesReclaimed).toBeGreaterThan(after.activeBytes);
    await world.daemon.stop();
    expect(geo.listenerCount()).toBe(0);
  });

  it("finds a geo file that grew before it started with the start-up rescan (listed with the db's design docs)", async () => {
    const { world, geo } = geoWorld();
    world.store.createDb(DB);
    for (let n = 0; n < 5; n++) churn(geo, n);
    const before = await fileOf(geo);
    expect(before.fileBytes).toBeGreaterThan(1_048_576);
    expect(before.fileBytes / before.activeBytes).toBeGreaterThan(2);
    await world.daemon.start();
    expect(await advanceUntil(world, () => world.daemon.metrics().finished >= 1)).toBe(true);
    expect(world.jobCalls.map((c) => c.object.kind)).toEqual(["geo"]);
    expect((await fileOf(geo)).fileBytes).toBeLessThan(before.fileBytes / 2);
    await world.daemon.stop();
  });

  it("a geo listing that fails is reported and does not stop the daemon", async () => {
    const { world } = geoWorld((geo) => ({ ...geo, files: () => Promise.reject(new Error("geo dir unreadable")) }));
    world.store.createDb(DB);
    await world.daemon.start();
    world.daemon.enqueueAll("views");
    expect(await advanceUntil(world, () => world.logger.find("smoosh: listing failed").length > 0, 100)).toBe(true);
    expect(JSON.stringify(world.logger.find("smoosh: listing failed"))).toContain("geo index files: geo dir unreadable");
    expect(world.daemon.isRunning()).toBe(true);
    await world.daemon.stop();
  });
});
