/**
 * The difference catch-up makes, in the model world: a db written while its
 * index builds. The seed refuses the second start (the build is running)
 * and resubmits the db after 60 s; upholster starts it again as soon as the
 * first build ends.
 */
import { describe, expect, it } from "vitest";
import { defaultIndexingConfig, indexingStatus, type IndexingConfig } from "../../../src/core/indexing/index.js";
import { World } from "./world.js";

const VIEWS = { views: { v: { map: "function (doc) { emit(doc._id); }" } } };

/** One db with a view; a write every 100 ms for 5 s while builds take 10 ms per update; when is the index fresh? */
function burst(config: IndexingConfig): { freshAtMs: number; burstEndMs: number; world: World } {
  const world = new World({ config, seed: 7, msPerUpdate: 10 });
  world.createDb("db");
  world.putDdoc("db", "_design/d", VIEWS);
  world.settle(60_000);
  const startMs = world.nowMs;
  for (let i = 0; i < 50; i++) {
    world.write("db", 10);
    world.advanceTo(world.nowMs + 100);
  }
  const burstEndMs = world.nowMs;
  let freshAtMs = Number.POSITIVE_INFINITY;
  while (world.nowMs < startMs + 300_000) {
    world.advanceTo(world.nowMs + 50);
    if (world.indexesOf("db").every((i) => i.fresh)) {
      freshAtMs = world.nowMs;
      break;
    }
  }
  return { freshAtMs, burstEndMs, world };
}

describe("catch-up", () => {
  it("the seed: a refused db waits for its 60 s resubmit", () => {
    const { freshAtMs, burstEndMs, world } = burst({ ...defaultIndexingConfig, catchUp: false });
    expect(freshAtMs - burstEndMs).toBeGreaterThan(50_000);
    expect(world.state.metrics.resubmits).toBeGreaterThan(0);
    expect(world.violations).toEqual([]);
  });

  it("upholster: started again as soon as the running build ends", () => {
    const { freshAtMs, burstEndMs, world } = burst(defaultIndexingConfig);
    expect(freshAtMs - burstEndMs).toBeLessThan(2_000);
    expect(world.violations).toEqual([]);
    expect(indexingStatus(world.state, world.nowMs).indexes).toMatchObject([{ db: "db", state: "fresh", lag: 0, type: "views" }]);
  });
});
