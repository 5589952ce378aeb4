/**
 * From `/{db}/_design/{ddoc}/_geo/{index}` to an index definition and its
 * signature, with hastings' errors: 404 for a missing db, design doc or
 * index ("Geospatial index 'X' not found"), 400 for a member that cannot
 * be used (naming the field and value): bad input never gives a 5xx.
 */
import { decodeStIndex, stIndexSignature, type StIndexDefinition } from "../../core/geo/index.js";
import { GeoError, type GeoIndexRef } from "../../ports/geo.js";
import type { CompactionStore, DocumentStore } from "../../ports/store.js";

export type GeoStore = Pick<DocumentStore, "changes" | "getDoc" | "currentSeq"> & Pick<CompactionStore, "dbInfo" | "designDocs">;

export interface ResolvedIndex {
  readonly definition: StIndexDefinition;
  readonly signature: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export const indexNotFound = (index: string): GeoError => new GeoError(404, "not_found", `Geospatial index '${index}' not found`);

export async function resolveIndex(store: GeoStore, ref: GeoIndexRef): Promise<ResolvedIndex> {
  const ddoc = await store.getDoc(ref.db, ref.ddoc);
  if (ddoc === undefined) {
    const db = await store.dbInfo(ref.db);
    throw db === undefined ? new GeoError(404, "not_found", "Database does not exist.") : new GeoError(404, "not_found", "missing");
  }
  const declared = ddoc["st_indexes"];
  const raw = isRecord(declared) && Object.prototype.hasOwnProperty.call(declared, ref.index) ? declared[ref.index] : undefined;
  if (raw === undefined) throw indexNotFound(ref.index);
  const decoded = decodeStIndex(ref.index, raw);
  if (decoded._tag === "Left") throw new GeoError(400, "bad_request", `${ref.ddoc}: ${decoded.left}`);
  return { definition: decoded.right, signature: stIndexSignature(decoded.right) };
}
