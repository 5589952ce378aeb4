/**
 * Geo from the package entry, in-process: the README's library paragraph on
 * `upholster.geo` (no HTTP), on the in-memory store and wall time.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore, createRecordingLogger, createUpholster, parseGeoRequest, realScheduler } from "../../src/index.js";

describe("embedding upholster: geo", () => {
  it("a design doc with st_indexes is searchable in-process through upholster.geo.service", async () => {
    const scheduler = realScheduler({ unref: true });
    const store = createMemoryStore({ scheduler });
    const upholster = createUpholster({ store, events: store.createEventSource(), scheduler, logger: createRecordingLogger(), config: { smoosh: { db_channels: "", view_channels: "" } } });
    await upholster.start();
    try {
      store.createDb("places");
      store.writeDocs("places", [
        { _id: "_design/geo", st_indexes: { points: { index: "function (doc) { if (doc.loc) st_index({ type: 'Point', coordinates: doc.loc }); }" } } },
        { _id: "a", loc: [1, 1] },
        { _id: "b", loc: [2, 2] },
        { _id: "c", loc: [50, 50] },
        { _id: "no-geometry" },
      ]);
      const prepared = parseGeoRequest({ bbox: "0,0,3,3" });
      if (prepared._tag === "Left") throw new Error(prepared.left.reason);
      const answer = await upholster.geo.service.search({ db: "places", ddoc: "_design/geo", index: "points" }, prepared.right);
      // Ordered by distance from the box's centre (1.5, 1.5), then id: a and b tie.
      expect(answer.page.hits.map((hit) => hit.id)).toEqual(["a", "b"]);
      const bad = parseGeoRequest({ bbox: "0,0,3,3", radius: "10", lat: "0", lon: "0" });
      expect(bad._tag === "Left" && bad.left.reason).toBe("Multiple geometry queries specified.");
    } finally {
      await upholster.stop();
      store.close();
    }
  });
});
