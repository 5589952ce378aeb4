/**
 * Response bodies, member for member and in hastings' member order
 * (hastings_format_view, _geojson, _legacy):
 *
 * - view:    {bookmark, rows: [{id, rev, geometry}]}
 *            with include_docs: rows [{id, geometry, doc}] (no rev: it is in the doc)
 * - geojson: {bookmark, type: "FeatureCollection", features: [{_id, geometry, type: "Feature", properties: []}]}
 *            with include_docs: features [{_id, geometry, _rev, type: doc.type or "Feature",
 *            properties: doc.properties or []}]
 * - legacy:  {type: "FeatureCollection", features: [{id}], bookmark}
 *            with include_docs: features [{id, type: "Feature" (unless the doc has a type), ...doc without _id and _rev}]
 *
 * `geometry` is null with include_geoms=false. A doc that could not be read
 * (deleted since it was indexed) is given as null (view) or as no doc.
 */
import { encodeBookmark } from "./bookmark.js";
import type { GeoFormat } from "./query-params.js";
import type { GeoPage } from "./search.js";

export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export type JsonObject = { readonly [key: string]: Json };

export interface FormatOptions {
  readonly format: GeoFormat;
  readonly includeDocs: boolean;
}

/** Docs for include_docs, by id (fetched by the caller for the page's ids). */
export type DocLookup = (id: string) => JsonObject | null | undefined;

type PageHit = GeoPage["hits"][number];

function viewBody(page: GeoPage, bookmark: string, includeDocs: boolean, docs: DocLookup): JsonObject {
  const rows = page.hits.map((hit: PageHit): JsonObject =>
    includeDocs ? { id: hit.id, geometry: hit.geometry, doc: docs(hit.id) ?? null } : { id: hit.id, rev: hit.rev, geometry: hit.geometry },
  );
  return { bookmark, rows };
}

function geoJsonFeature(hit: PageHit, includeDocs: boolean, docs: DocLookup): JsonObject {
  if (!includeDocs) return { _id: hit.id, geometry: hit.geometry, type: "Feature", properties: [] };
  const doc = docs(hit.id) ?? {};
  return {
    _id: hit.id,
    geometry: hit.geometry,
    _rev: doc["_rev"] ?? null,
    type: doc["type"] ?? "Feature",
    properties: doc["properties"] ?? [],
  };
}

function legacyFeature(hit: PageHit, includeDocs: boolean, docs: DocLookup): JsonObject {
  if (!includeDocs) return { id: hit.id };
  const { _id: _ignoredId, _rev: _ignoredRev, ...body } = docs(hit.id) ?? {};
  return "type" in body ? { id: hit.id, ...body } : { id: hit.id, type: "Feature", ...body };
}

const noDocs: DocLookup = () => undefined;

/** The JSON body of a search response. */
export function formatGeoResponse(page: GeoPage, options: FormatOptions, docs: DocLookup = noDocs): JsonObject {
  const bookmark = encodeBookmark(page.bookmark);
  switch (options.format) {
    case "view":
      return viewBody(page, bookmark, options.includeDocs, docs);
    case "geojson":
      return {
        bookmark,
        type: "FeatureCollection",
        features: page.hits.map((hit) => geoJsonFeature(hit, options.includeDocs, docs)),
      };
    case "legacy":
      return {
        type: "FeatureCollection",
        features: page.hits.map((hit) => legacyFeature(hit, options.includeDocs, docs)),
        bookmark,
      };
  }
}
