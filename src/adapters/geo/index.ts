/**
 * Geo index adapter: the mutable spatial index of one `st_indexes` index
 * (see geo-index.ts), searched by the pure core in src/core/geo.
 */
export { GeoIndex, type GeoIndexOptions, type GeoIndexSizes, type GeoDimensions } from "./geo-index.js";
export { GeoSnapshotError } from "./snapshot.js";
