/**
 * The `fetch-info` effect: ask the store for an object's sizes and answer the
 * core with `info-fetched` (`"missing"` when it no longer exists) or
 * `info-failed`. Database fetches issued in the same step go out as one
 * `dbInfos` call where the store can batch (CouchDB `POST /_dbs_info`).
 * Geo index files are asked of `GeoIndexFiles`, not of the store; without
 * one they are `"missing"` (a restored queue may name one).
 */
import { DEFAULT_DBS_PER_INFO_REQUEST, type ObjectInfo, type SmooshEffect, type SmooshEvent } from "../../core/compaction/index.js";
import type { GeoIndexFiles } from "../../ports/geo.js";
import type { CompactionStore, DbInfo } from "../../ports/store.js";
import { errorText } from "../../core/shared/error-text.js";
import { toDbSizeInfo, toGeoSizeInfo, toViewSizeInfo } from "./infos.js";

export type FetchInfoEffect = Extract<SmooshEffect, { type: "fetch-info" }>;

export async function fetchInfos(
  store: CompactionStore,
  effects: readonly FetchInfoEffect[],
  answer: (event: SmooshEvent) => void,
  geoFiles?: GeoIndexFiles,
): Promise<void> {
  const dbFetches = effects.filter((e) => e.object.kind === "db");
  const batched = store.dbInfos !== undefined && dbFetches.length > 1;
  const singles = batched ? effects.filter((e) => e.object.kind !== "db") : effects;
  await Promise.all([
    ...singles.map((effect) => fetchOne(store, geoFiles, effect, answer)),
    ...(batched ? chunks(dbFetches, store.dbInfosBatchSize ?? DEFAULT_DBS_PER_INFO_REQUEST).map((chunk) => fetchDbBatch(store, chunk, answer)) : []),
  ]);
}

async function fetchOne(
  store: CompactionStore,
  geoFiles: GeoIndexFiles | undefined,
  effect: FetchInfoEffect,
  answer: (event: SmooshEvent) => void,
): Promise<void> {
  let info: ObjectInfo | "missing";
  try {
    info = await objectInfo(store, geoFiles, effect.object);
  } catch (error) {
    answer({ type: "info-failed", requestId: effect.requestId, error: errorText(error) });
    return;
  }
  answer({ type: "info-fetched", requestId: effect.requestId, info });
}

async function objectInfo(store: CompactionStore, geoFiles: GeoIndexFiles | undefined, object: FetchInfoEffect["object"]): Promise<ObjectInfo | "missing"> {
  switch (object.kind) {
    case "db": {
      const info = await store.dbInfo(object.db);
      return info === undefined ? "missing" : toDbSizeInfo(info);
    }
    case "view": {
      const info = await store.viewIndexInfo(object.db, object.ddoc);
      return info === undefined ? "missing" : toViewSizeInfo(info);
    }
    case "cleanup": {
      // Nothing to size: cleanup only needs the db to still exist.
      const info = await store.dbInfo(object.db);
      return info === undefined ? "missing" : { kind: "cleanup" };
    }
    case "geo": {
      const file = await geoFiles?.file(object.db, object.signature);
      return file === undefined ? "missing" : toGeoSizeInfo(file);
    }
  }
}

async function fetchDbBatch(store: CompactionStore, effects: readonly FetchInfoEffect[], answer: (event: SmooshEvent) => void): Promise<void> {
  const dbs = [...new Set(effects.map((e) => e.object.db))];
  let infos: Map<string, DbInfo>;
  try {
    // Checked by the caller; the non-null path keeps the types honest.
    infos = store.dbInfos === undefined ? new Map() : await store.dbInfos(dbs);
  } catch (error) {
    answer({ type: "infos-fetched", answers: effects.map((effect) => ({ requestId: effect.requestId, error: errorText(error) })) });
    return;
  }
  // One step for the whole batch: the core settles its answers together.
  answer({
    type: "infos-fetched",
    answers: effects.map((effect) => {
      const info = infos.get(effect.object.db);
      return { requestId: effect.requestId, info: info === undefined ? "missing" : toDbSizeInfo(info) };
    }),
  });
}

const chunks = <A>(items: readonly A[], size: number): A[][] => {
  const out: A[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};
