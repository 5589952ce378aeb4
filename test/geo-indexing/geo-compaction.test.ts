/**
 * End to end through createUpholster: a geo index file that churn has
 * filled with garbage is seen by the compaction daemon (its growth
 * notices, in the view channels) and compacted, with no call by hand.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.js";
import { point, POINT_FN, put, startGeo, uniqueDb, type GeoHarness } from "./harness.js";

/** View channels only (geo files go through them), no size floor, no observation delay. */
const COMPACTING_CONFIG = {
  smoosh: { db_channels: "", view_channels: "ratio_views", cleanup_channels: "", wait_secs: "0", min_check_interval_ms: "0" },
  "smoosh.ratio_views": { min_size: "0", min_priority: "2.0" },
  fabric: { index_updater_delay_msec: "50", index_updater_resolution_msec: "50" },
};

let dir: string | undefined;
let running: GeoHarness | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe("geo index files and the compaction daemon", () => {
  it("a churned geo file is compacted by the daemon in a view channel", async () => {
    dir = await mkdtemp(join(tmpdir(), "upholster-geo-compaction-"));
    const h = (running = await startGeo({ config: COMPACTING_CONFIG, geo: { indexDir: dir } }));
    const db = uniqueDb("compacted");
    h.store.createDb(db);
    const revs = new Map<string, string>();
    await put(h.store, db, [{ _id: "_design/g", st_indexes: { g: { index: POINT_FN } } }], revs);
    const ref = { db, ddoc: "_design/g", index: "g" };
    // Each round rewrites the same 50 docs: the file's log grows, its live data does not.
    for (let round = 0; round < 8; round++) {
      await put(h.store, db, Array.from({ length: 50 }, (_, i) => ({ _id: `d${i}`, geometry: point(i, round) })), revs);
      await h.search(ref, { bbox: "-180,-90,180,90" });
    }
    await waitFor(() => h.upholster.smoosh.metrics().bytesReclaimed > 0, "the daemon compacts the geo file", 60_000);
    const [file] = await h.upholster.geo.files.files(db);
    expect(file!.fileBytes).toBeLessThan(2 * file!.activeBytes + 512);
    expect(h.logger.text()).toContain(`${db} _geo/`);
    // Still answers, from the rewritten file.
    expect((await h.search(ref, { bbox: "0,7,49,7" })).page.hits).toHaveLength(50);
  });
});
