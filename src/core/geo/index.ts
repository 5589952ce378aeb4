/**
 * Public API of the geo core (hastings' `_geo` semantics). Pure: no I/O, no
 * clock, no randomness. The usual flow for one request:
 *
 *   decodeGeoQuery(searchParams, { accept })   -> Either<GeoQueryError, GeoQuery>
 *   prepareGeoQuery(query)                      -> Either<GeoQueryError, PreparedGeoQuery>
 *   runGeoSearch([{ shard, reader }], prepared) -> GeoPage (hits + next bookmark)
 *   formatGeoResponse(page, query, docs?)       -> the JSON body
 *
 * (`parseGeoRequest` = decode + prepare.) Index functions' output goes
 * through `validateGeoJson` (reason strings for skipped docs) and
 * `geometryFacts` (box, centroid, jsts geometry) before an index keeps it.
 */
import type { Either } from "fp-ts/lib/Either.js";
import { decodeGeoQuery, type GeoQueryError, type GeoQueryOptions } from "./query-params.js";
import { prepareGeoQuery, type PreparedGeoQuery } from "./query-geometry.js";

export {
  decodeGeoQuery,
  queryParseError,
  RelationC,
  FormatNameC,
  DEFAULT_LIMIT,
  DEFAULT_MAX_LIMIT,
  EPSG_4326_URN,
  type GeoQuery,
  type GeoQueryError,
  type GeoQueryOptions,
  type GeoFormat,
  type QueryShape,
  type Relation,
  type Stale,
} from "./query-params.js";
export {
  prepareGeoQuery,
  ELLIPSE_VERTICES,
  GC_RELATION_REASON,
  type PreparedGeoQuery,
  type GeodesicCircle,
  type QueryEllipse,
} from "./query-geometry.js";
export {
  validateGeoJson,
  trimDimensions,
  positionSize,
  GeoJsonGeometryC,
  type GeoJsonGeometry,
  type GeoJsonType,
  type Position,
} from "./geojson.js";
export { geometryFacts, jstsOf, pointFacts, envelopesMeet, type GeometryFacts, type Envelope } from "./indexed-geometry.js";
export { pointRelationTest, relationTest, relates, type PointRelationTest, type RelationOperands, type RelationTest } from "./relation.js";
export {
  compareIds,
  compareHitKeys,
  isAfter,
  planarDistanceDeg,
  wrappedPlanarDistanceDeg,
  geodesicOrderDistanceM,
  type HitKey,
} from "./order.js";
export { encodeBookmark, decodeBookmark, parseBookmark, advanceBookmark, emptyBookmark, type Bookmark } from "./bookmark.js";
export { mergeShardHits, type ShardKeyed } from "./merge.js";
export { searchShard, runGeoSearch, type GeoIndexReader, type GeoHit, type GeoPage, type GeoShard } from "./search.js";
export { formatGeoResponse, type FormatOptions, type DocLookup, type Json, type JsonObject } from "./format.js";
export { ellipseHalfWidthsDeg, geodesicDistanceM, destination } from "./geodesic.js";
export type { JstsGeometry, PreparedArea } from "./jsts.js";

/** decodeGeoQuery then prepareGeoQuery: a request's query string to a runnable query, or its 400. */
export const parseGeoRequest = (
  params: Parameters<typeof decodeGeoQuery>[0],
  options: GeoQueryOptions = {},
): Either<GeoQueryError, PreparedGeoQuery> => {
  const decoded = decodeGeoQuery(params, options);
  return decoded._tag === "Left" ? decoded : prepareGeoQuery(decoded.right);
};
export {
  decodeStIndex,
  decodeStIndexes,
  stIndexSignature,
  geoIndexesOf,
  ST_INDEXES_FIELD,
  ST_INDEXES_TYPE,
  DEFAULT_ST_INDEX_TYPE,
  type StIndexDefinition,
  type StIndexDimensions,
  type DecodedStIndexes,
} from "./st-indexes.js";
