/** A memory store with upholster (its background indexer and geo) on real time, for the geo indexing tests. */
import { createRecordingLogger, type RecordingLogger } from "../../src/adapters/logging/index.js";
import { createMemoryStore, type MemoryStore } from "../../src/adapters/memory/index.js";
import { parseGeoRequest, type PreparedGeoQuery } from "../../src/core/geo/index.js";
import type { GeoIndexRef, GeoSearchAnswer } from "../../src/ports/geo.js";
import type { GeoSubsystemOptions } from "../../src/runtime/geo/subsystem.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { createUpholster, type Upholster } from "../../src/runtime/upholster.js";
import type { IniSections } from "../../src/core/shared/ini.js";

/** No compaction; a written db is looked at after 50 ms. */
export const GEO_TEST_CONFIG = {
  smoosh: { db_channels: "", view_channels: "", cleanup_channels: "" },
  fabric: { index_updater_delay_msec: "50", index_updater_resolution_msec: "50" },
};

/** Writes never start a build (only design doc writes do): for stale tests. */
export const LAZY_CONFIG = {
  ...GEO_TEST_CONFIG,
  fabric: { index_updater_delay_msec: "3600000", index_updater_resolution_msec: "50" },
};

export const POINT_FN = "function (doc) { if (doc.geometry) { st_index(doc.geometry); } }";

export interface GeoHarness {
  readonly store: MemoryStore;
  readonly upholster: Upholster;
  readonly logger: RecordingLogger;
  search(ref: GeoIndexRef, params: Record<string, string>): Promise<GeoSearchAnswer>;
  stop(): Promise<void>;
}

export const prepared = (params: Record<string, string>): PreparedGeoQuery => {
  const parsed = parseGeoRequest(params);
  if (parsed._tag === "Left") throw new Error(`bad test query: ${JSON.stringify(parsed.left)}`);
  return parsed.right;
};

export async function startGeo(options: { store?: MemoryStore; config?: IniSections; geo?: GeoSubsystemOptions } = {}): Promise<GeoHarness> {
  const scheduler = realScheduler({ unref: true });
  const store = options.store ?? createMemoryStore({ scheduler });
  const logger = createRecordingLogger();
  const upholster = createUpholster({
    store,
    events: store.createEventSource(),
    scheduler,
    logger,
    config: options.config ?? GEO_TEST_CONFIG,
    geo: { sandboxLimits: { timeoutMsPerDoc: 200 }, ...options.geo },
  });
  await upholster.start();
  return {
    store,
    upholster,
    logger,
    search: (ref, params) => upholster.geo.service.search(ref, prepared({ limit: "200", ...params })),
    stop: () => upholster.stop(),
  };
}

export const point = (x: number, y: number) => ({ type: "Point", coordinates: [x, y] });

export const idsOf = (answer: GeoSearchAnswer): string[] => answer.page.hits.map((hit) => hit.id).sort();

/** Writes docs (creating or updating), returns their new revs by id. */
export async function put(store: MemoryStore, db: string, docs: readonly Record<string, unknown>[], revs: Map<string, string>): Promise<void> {
  const results = await store.bulkDocs(
    db,
    docs.map((doc) => ({ ...doc, _id: String(doc["_id"]), ...(revs.has(String(doc["_id"])) ? { _rev: revs.get(String(doc["_id"])) } : {}) })),
  );
  for (const result of results) {
    if (!result.ok) throw new Error(`write of ${result.id} failed: ${result.error}`);
    revs.set(result.id, result.rev);
  }
}

let counter = 0;
export const uniqueDb = (stem: string): string => `geo_${stem}_${++counter}_${Math.random().toString(36).slice(2, 7)}`;
