/**
 * Bookmark paging over HTTP: following `bookmark` page after page returns
 * exactly the unpaged result, in order, with no duplicates, for every kind
 * of query; an exhausted query answers the same bookmark and no rows.
 * (fast-check, the suite's fixed seed.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { createRandom } from "../../../src/adapters/memory/random.js";
import { call, startGeoServer, type GeoServer } from "./harness.js";

const PATH = "/world/_design/geo/_geo/shapes";
/** Fewer matches than the largest limit, so one request with limit=200 is the unpaged result. */
const POINT_COUNT = 150;

let geo: GeoServer;
beforeAll(async () => {
  geo = await startGeoServer();
  geo.service.createDb("world");
  geo.service.defineIndex("world", "_design/geo", "shapes");
  const random = createRandom(7);
  const at = (min: number, max: number): number => min + (max - min) * random.next();
  for (let i = 0; i < POINT_COUNT; i++) {
    // Coordinates on a 0.5 degree grid: many equal distances, so ties are broken by id.
    const [x, y] = [Math.round(at(-10, 10) * 2) / 2, Math.round(at(-10, 10) * 2) / 2];
    geo.service.putDoc("world", { _id: `p${i}`, _rev: "1-a", geometry: { type: "Point", coordinates: [x, y] } });
  }
  // Two geometries for one doc: it can appear twice (hastings does the same).
  geo.service.defineIndex("world", "_design/geo", "shapes", (doc) => (doc["also"] === undefined ? [doc["geometry"]] : [doc["geometry"], doc["also"]]));
  geo.service.putDoc("world", { _id: "twice", _rev: "1-a", geometry: { type: "Point", coordinates: [1, 1] }, also: { type: "Point", coordinates: [-1, -1] } });
});
afterAll(() => geo.server.close());

interface Page {
  bookmark: string;
  rows: { id: string; geometry: unknown }[];
}

const get = async (query: string): Promise<Page> => {
  const answer = await call(geo.url, "GET", `${PATH}?${query}`);
  expect(answer.status).toBe(200);
  return answer.json as Page;
};

const rowKey = (row: Page["rows"][number]): string => `${row.id} ${JSON.stringify(row.geometry)}`;

const queryArbitrary = fc.oneof(
  fc.tuple(fc.integer({ min: -12, max: 8 }), fc.integer({ min: -12, max: 8 }), fc.integer({ min: 1, max: 8 })).map(([x, y, size]) => `bbox=${x},${y},${x + size},${y + size}`),
  fc.tuple(fc.integer({ min: -10, max: 10 }), fc.integer({ min: -10, max: 10 }), fc.integer({ min: 50, max: 600 })).map(([x, y, km]) => `lon=${x}&lat=${y}&radius=${km * 1000}`),
  fc
    .tuple(fc.integer({ min: -10, max: 5 }), fc.integer({ min: -10, max: 5 }), fc.constantFrom("intersects", "contains", "disjoint"))
    .map(([x, y, relation]) => `g=${encodeURIComponent(`POLYGON((${x} ${y}, ${x + 5} ${y}, ${x + 5} ${y + 5}, ${x} ${y}))`)}&relation=${relation}`),
  fc.tuple(fc.integer({ min: -10, max: 10 }), fc.integer({ min: -10, max: 10 })).map(([x, y]) => `g=${encodeURIComponent(`POINT(${x} ${y})`)}&nearest=true`),
);

describe("bookmark paging over HTTP", () => {
  it("pages followed by their bookmarks are the unpaged result, in order, without duplicates", async () => {
    await fc.assert(
      fc.asyncProperty(queryArbitrary, fc.integer({ min: 1, max: 40 }), async (query, limit) => {
        const unpaged = (await get(`${query}&limit=200`)).rows.map(rowKey);
        const paged: string[] = [];
        let page = await get(`${query}&limit=${limit}`);
        while (page.rows.length > 0) {
          paged.push(...page.rows.map(rowKey));
          expect(paged.length).toBeLessThanOrEqual(unpaged.length);
          page = await get(`${query}&limit=${limit}&bookmark=${encodeURIComponent(page.bookmark)}`);
        }
        expect(paged).toEqual(unpaged);
        expect(new Set(paged).size).toBe(paged.length);
        // Exhausted: the same bookmark again, and no rows.
        const again = await get(`${query}&limit=${limit}&bookmark=${encodeURIComponent(page.bookmark)}`);
        expect(again).toEqual({ bookmark: page.bookmark, rows: [] });
      }),
      { numRuns: 60 },
    );
  });

  it("a doc indexed with two geometries appears once per geometry", async () => {
    const rows = (await get("bbox=-2,-2,2,2&limit=200")).rows.filter((row) => row.id === "twice");
    expect(rows.map((row) => row.geometry)).toEqual([
      { type: "Point", coordinates: [1, 1] },
      { type: "Point", coordinates: [-1, -1] },
    ]);
  });
});
