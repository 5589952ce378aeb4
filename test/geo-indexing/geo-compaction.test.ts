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
    const churn = async (fromRound: number, toRound: number): Promise<void> => {
      for (let round = fromRound; round < toRound; round++) {
        await put(h.store, db, Array.from({ length: 50 }, (_, i) => ({ _id: `d${i}`, geometry: point(i, round) })), revs);
        await h.search(ref, { bbox: "-180,-90,180,90" });
      }
    };
    const compactions = (): number => h.upholster.smoosh.metrics().finished;
    await churn(0, 5);
    await waitFor(() => compactions() >= 1, "the daemon compacts the churned geo file", 25_000);
    // Churned again after its compaction (on a busy machine the first one may even come between
    // rounds): the daemon compacts it again, down to its live data. Wait for that end state.
    await churn(5, 8);
    const file = await waitFor(async () => {
      const [current] = await h.upholster.geo.files.files(db);
      return compactions() >= 2 && current !== undefined && current.fileBytes < 2 * current.activeBytes + 512 ? current : false;
    }, "a second compaction of the geo file, down to its live data", 25_000);
    expect(h.upholster.smoosh.metrics().bytesReclaimed).toBeGreaterThan(file.activeBytes);
    expect(h.logger.text()).toContain(`${db} _geo/`);
    // Still answers, from the rewritten file.
    expect((await h.search(ref, { bbox: "0,7,49,7" })).page.hits).toHaveLength(50);
  });
});
