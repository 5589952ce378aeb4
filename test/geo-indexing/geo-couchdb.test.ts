/**
 * Geo on a real CouchDB (which has none): upholster follows the db's
 * `_changes?include_docs=true` and keeps the index itself. Gated on
 * COUCHDB_URL (loopback only), like the other CouchDB contract tests.
 */
import { describe, expect, it } from "vitest";
import { createCouchStore } from "../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../src/adapters/state/index.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { createUpholster } from "../../src/runtime/upholster.js";
import { fastAdapterOptions } from "../contract/http-daemon-harness.js";
import { plainUrlAndAuth } from "../contract/indexing-http-harness.js";
import { waitFor } from "../support/wait-for.js";
import { GEO_TEST_CONFIG, idsOf, point, POINT_FN, prepared } from "./harness.js";

const raw = process.env.COUCHDB_URL;
const target = raw === undefined || raw === "" ? undefined : new URL(raw);
const loopback = target !== undefined && /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(target.hostname);

if (raw === undefined || target === undefined || !loopback) {
  const why = target === undefined ? "COUCHDB_URL is not set" : `COUCHDB_URL host ${target.hostname} is not a loopback address`;
  describe.skip(`geo indexing on CouchDB (${why})`, () => {
    it("needs COUCHDB_URL", () => undefined);
  });
} else {
  describe("geo indexing on CouchDB", () => {
    it("the background indexer builds from the changes feed; queries wait for the db's seq; updates and deletions follow", async () => {
      const logger = createRecordingLogger();
      const scheduler = realScheduler({ unref: true });
      const couch = createCouchStore({ url: raw, logger, state: createMemoryStatePort(), scheduler, ...fastAdapterOptions, ddocChecks: { minIntervalMs: 200, maxIntervalMs: 2_000 } });
      const upholster = createUpholster({ store: couch.store, events: couch.events, scheduler, logger, config: GEO_TEST_CONFIG });
      const { base, headers } = plainUrlAndAuth(raw);
      const db = `upholster_geo_${Math.random().toString(36).slice(2, 8)}`;
      const call = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> =>
        (await (await fetch(`${base}/${db}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })).json()) as Record<string, unknown>;
      await upholster.start();
      try {
        await call("PUT", "");
        await call("POST", "/_bulk_docs", { docs: [{ _id: "_design/g", st_indexes: { g: { index: POINT_FN } } }, ...Array.from({ length: 30 }, (_, i) => ({ _id: `p${i}`, geometry: point(i, 0) }))] });
        const ref = { db, ddoc: "_design/g", index: "g" };
        const service = upholster.geo.service;
        await waitFor(async () => (await service.search(ref, prepared({ bbox: "-1,-1,100,1", stale: "ok", limit: "200" }))).page.hits.length === 30, "built in the background");
        const p0 = await call("GET", "/p0");
        await call("PUT", "/p0", { _rev: p0["_rev"], geometry: point(50, 50) });
        const p1 = await call("GET", "/p1");
        await call("DELETE", `/p1?rev=${String(p1["_rev"])}`);
        const moved = await service.search(ref, prepared({ bbox: "49,49,51,51", include_docs: "true" }));
        expect(idsOf(moved)).toEqual(["p0"]);
        expect(moved.docs("p0")).toMatchObject({ _id: "p0", geometry: point(50, 50) });
        expect(idsOf(await service.search(ref, prepared({ bbox: "-1,-1,100,1", limit: "200" })))).toHaveLength(28);
      } finally {
        await upholster.stop();
        await call("DELETE", "").catch(() => undefined);
      }
    });
  });
}
