/**
 * Geo cleanup (hastings_vacuum, `POST /{db}/_geo_cleanup`): the indexes of
 * a db, open or only on disk, whose signature no design doc of the db
 * declares any more are dropped, files included.
 */
import { geoIndexesOf } from "../../core/geo/index.js";
import type { ListedDesignDoc } from "../../core/indexing/index.js";
import type { DbName } from "../../ports/store.js";
import type { GeoIndexManager } from "./manager.js";

/** Returns the signatures removed. */
export async function cleanupGeoIndexes(manager: GeoIndexManager, db: DbName, designDocs: readonly ListedDesignDoc[]): Promise<string[]> {
  const used = new Set(geoIndexesOf(designDocs).indexes.map((spec) => spec.key));
  const stored = (await manager.storage.list(db)).map((file) => file.signature);
  const unused = [...new Set([...manager.openSignatures(db), ...stored])].filter((signature) => !used.has(signature)).sort();
  for (const signature of unused) await manager.drop(db, signature);
  return unused;
}
