/**
 * bench:geo's real build path: the docs as CouchDB hands them to an index
 * function (`_id`, `_rev`, then the body), run through a design doc's
 * st_index function in the QuickJS sandbox (worker thread), the geometries
 * each call passed to `st_index` upserted into a GeoIndex. Pages of 1,000
 * docs per `run` call with 3 pages in flight, as the view updater
 * (src/adapters/memory/views/update-pass.ts): the sandbox thread maps the
 * next pages while this thread upserts the current one.
 */
import { GeoIndex } from "../../src/adapters/geo/index.js";
import { createSandboxFactory } from "../../src/adapters/sandbox/index.js";
import type { GeoJsonGeometry } from "../../src/core/geo/index.js";
import type { DocOutcome } from "../../src/ports/sandbox.js";

export const ST_INDEX_SOURCE = "function(doc){ if (doc.geometry) st_index(doc.geometry); }";
const PAGE_DOCS = 1000;
const PAGES_IN_FLIGHT = 3;
const REV = "1-a";

interface SourceDoc {
  readonly id: string;
  readonly geometry: GeoJsonGeometry;
}

/** What the store would hold: a GeoJSON Feature per doc. */
const couchDoc = (doc: SourceDoc): Record<string, unknown> => ({ _id: doc.id, _rev: REV, type: "Feature", geometry: doc.geometry });

/** Upserts one page's outcomes; returns how many docs the function failed on. */
function upsertPage(index: GeoIndex, outcomes: readonly DocOutcome[]): number {
  let failed = 0;
  for (const outcome of outcomes) {
    const result = outcome.results[0];
    if (result === undefined || !result.ok || !("geometries" in result)) {
      failed++;
      continue;
    }
    if (index.upsert(outcome.id, REV, result.geometries)._tag === "Left") failed++;
  }
  return failed;
}

export async function buildThroughSandbox(docs: readonly SourceDoc[]): Promise<GeoIndex> {
  const factory = createSandboxFactory();
  const { sandbox, errors } = await factory.compile([{ name: "geo", kind: "st_index", source: ST_INDEX_SOURCE }]);
  if (errors.length > 0) throw new Error(`st_index function refused: ${JSON.stringify(errors)}`);
  const index = new GeoIndex();
  const inFlight: Promise<readonly DocOutcome[]>[] = [];
  let next = 0;
  let failed = 0;
  const feed = (): void => {
    while (next < docs.length && inFlight.length < PAGES_IN_FLIGHT) {
      inFlight.push(sandbox.run(docs.slice(next, next + PAGE_DOCS).map(couchDoc)));
      next += PAGE_DOCS;
    }
  };
  try {
    feed();
    for (let page = inFlight.shift(); page !== undefined; page = inFlight.shift()) {
      feed();
      failed += upsertPage(index, await page);
    }
  } finally {
    sandbox.dispose();
  }
  if (failed > 0) throw new Error(`${failed} docs failed in the sandbox or the index`);
  index.flush();
  return index;
}
