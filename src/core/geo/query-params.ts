/**
 * The `_geo` query string, decoded as hastings_httpd:parse_search_req does
 * (hastings_httpd_util for the value conversions):
 *
 * - every known parameter is converted in query-string order and the first
 *   bad value is the error: 400 `query_parse_error` with
 *   "Invalid <type> value for <name>: '<value as JSON>'" (hastings' exact
 *   text, quotes and all: `lat=abc` gives `Invalid float value for lat: '"abc"'`);
 * - exactly one query geometry: `g`/`geometry` (WKT), `bbox`, a circle
 *   (`lon`,`lat`,`radius` = `x`,`y`,`r`) or an ellipse (`lon`,`lat`,
 *   `rangex`,`rangey` = `x`,`y`,`x_range`,`y_range`); the first occurrence
 *   of each counts; else "No geometry query specified." /
 *   "Multiple geometry queries specified.";
 * - for every other parameter the last occurrence wins; `format` falls back
 *   to the Accept header (an exact format name, else ignored), then `view`;
 * - `relation` (= `filter`) defaults to none for bbox and nearest queries,
 *   intersects otherwise; a 3D/4D bbox (6 or 8 numbers) takes no relation
 *   ("filter_with_md_bbox");
 * - `limit` at most `maxLimit` (200): "Limit must be less than or equal to 200";
 * - floats are Erlang's: `[+-]digits.digits[e[+-]digits]` or an integer
 *   (no `.5`, `1.`, `1e5`, spaces, NaN or infinities);
 * - validated though without effect here: `vbox`, `start`, `end` (temporal
 *   indexes), `stable`; `srid`/`srs` and `response_srid`/`responseSrs` must
 *   name EPSG:4326 (`urn:ogc:def:crs:EPSG::4326`): upholster does not reproject;
 * - unknown parameters and empty names are ignored.
 *
 * upholster's opt-in extensions (off by default, so the default behaviour
 * is hastings' planar semantics exactly):
 * - `wrap=true` (bbox only, not with `nearest`): `bbox=west,south,east,north`
 *   with west > east selects the band across the antimeridian
 *   (west..180 and -180..east) instead of hastings' -east..west envelope,
 *   and distances take longitude differences the short way round;
 * - `geodesic=true` (not with `nearest`): distances are WGS84 geodesic
 *   metres between the centroids; a radius query selects point docs within
 *   exactly `radius` metres (other docs against a 100-vertex geodesic circle
 *   instead of hastings' planar ellipse).
 *
 * Never throws: any input gives a query or a 400-shaped error.
 */
import * as t from "io-ts";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { emptyBookmark, parseBookmark, type Bookmark } from "./bookmark.js";

export const RelationC = t.keyof({
  none: null,
  intersects: null,
  contains: null,
  contains_properly: null,
  covered_by: null,
  covers: null,
  crosses: null,
  disjoint: null,
  overlaps: null,
  touches: null,
  within: null,
});
export type Relation = t.TypeOf<typeof RelationC>;

/** `format=` values (and Accept header values) -> the response format. */
export const FormatNameC = t.keyof({ view: null, geojson: null, "application/vnd.geo+json": null, legacy: null });
export type GeoFormat = "view" | "geojson" | "legacy";
const formatOf = (name: t.TypeOf<typeof FormatNameC>): GeoFormat => (name === "application/vnd.geo+json" ? "geojson" : name);

export type QueryShape =
  | { readonly kind: "wkt"; readonly wkt: string }
  /** As given: x1,y1,x2,y2 (corners in any order), or 6/8 numbers with z (and m): mins first, then maxs. */
  | { readonly kind: "bbox"; readonly coordinates: readonly number[] }
  | { readonly kind: "circle"; readonly x: number; readonly y: number; readonly radiusM: number }
  | { readonly kind: "ellipse"; readonly x: number; readonly y: number; readonly rangeXM: number; readonly rangeYM: number };

/** `stale=ok` and `stale=update_after` both mean "do not wait for the index" (hastings treats them alike). */
export type Stale = false | "ok" | "update_after";

export interface GeoQuery {
  readonly shape: QueryShape;
  readonly relation: Relation;
  readonly nearest: boolean;
  readonly limit: number;
  readonly skip: number;
  readonly bookmark: Bookmark;
  readonly stale: Stale;
  readonly stable: boolean;
  readonly includeDocs: boolean;
  readonly includeGeoms: boolean;
  readonly format: GeoFormat;
  /** Extension: antimeridian-aware bbox. */
  readonly wrap: boolean;
  /** Extension: geodesic distances and exact radius. */
  readonly geodesic: boolean;
}

export interface GeoQueryError {
  readonly status: 400;
  readonly error: "query_parse_error";
  readonly reason: string;
}

export interface GeoQueryOptions {
  /** The request's Accept header, used when there is no `format` parameter. */
  readonly accept?: string | undefined;
  /** hastings' `max_limit` (default 200). */
  readonly maxLimit?: number;
  /** hastings' `default_format` (default view). */
  readonly defaultFormat?: GeoFormat;
}

export const DEFAULT_LIMIT = 25;
export const DEFAULT_MAX_LIMIT = 200;
export const EPSG_4326_URN = "urn:ogc:def:crs:EPSG::4326";

export const queryParseError = (reason: string): GeoQueryError => ({ status: 400, error: "query_parse_error", reason });

/** hastings' `invalid_value/3` text. */
const invalidValue = (type: string, name: string, value: string): string => `Invalid ${type} value for ${name}: '${JSON.stringify(value)}'`;

const ERLANG_FLOAT = /^[+-]?(\d+\.\d+([eE][+-]?\d+)?|\d+)$/;

/** `string:to_float/1`, else `list_to_integer/1` (finite results only); undefined for anything else. */
const erlangFloat = (value: string): number | undefined => {
  if (!ERLANG_FLOAT.test(value)) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
};

/** `erlangFloat` as a codec. The parameters call `erlangFloat` itself: io-ts' per-call context costs more than the check. */
export const ErlangFloatC = new t.Type<number, string, unknown>(
  "ErlangFloat",
  (u): u is number => typeof u === "number" && Number.isFinite(u),
  (u, c) => {
    const n = typeof u === "string" ? erlangFloat(u) : undefined;
    return n === undefined ? t.failure(u, c) : t.success(n);
  },
  String,
);

/** `list_to_integer/1` >= 0 (a sign is allowed, as Erlang does). Beyond 2^53 it is clamped, harmlessly. */
export const NonNegativeIntegerC = new t.Type<number, string, unknown>(
  "NonNegativeInteger",
  (u): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0,
  (u, c) => {
    if (typeof u !== "string" || !/^[+-]?\d+$/.test(u)) return t.failure(u, c);
    const n = Number(u);
    return n >= 0 || Object.is(n, -0) ? t.success(Math.min(Math.abs(n), Number.MAX_SAFE_INTEGER)) : t.failure(u, c);
  },
  String,
);

/** Only the literals `true` and `false`. */
export const ErlangBooleanC = t.keyof({ true: null, false: null });

type Converted =
  | { readonly field: "wkt"; readonly value: string }
  | { readonly field: "bbox" | "vbox"; readonly value: readonly number[] }
  | { readonly field: "x" | "y" | "r" | "x_range" | "y_range" | "t_start" | "t_end"; readonly value: number }
  | { readonly field: "nearest" | "stable" | "include_docs" | "include_geoms" | "wrap" | "geodesic"; readonly value: boolean }
  | { readonly field: "relation"; readonly value: Relation }
  | { readonly field: "req_srid" | "resp_srid"; readonly value: string }
  | { readonly field: "limit" | "skip"; readonly value: number }
  | { readonly field: "stale"; readonly value: Stale }
  | { readonly field: "bookmark"; readonly value: Bookmark }
  | { readonly field: "format"; readonly value: GeoFormat };

type Converter = (name: string, value: string, maxLimit: number) => Either<string, Converted>;

const decodeWith = <A>(codec: t.Decoder<unknown, A>, type: string, name: string, value: string): Either<string, A> => {
  const decoded = codec.decode(value);
  return isLeft(decoded) ? left(invalidValue(type, name, value)) : right(decoded.right);
};

const floatParam =
  (field: "x" | "y" | "r" | "x_range" | "y_range" | "t_start" | "t_end"): Converter =>
  (name, value) => {
    const decoded = erlangFloat(value);
    return decoded === undefined ? left(invalidValue("float", name, value)) : right({ field, value: decoded });
  };

/** `ErlangBooleanC`: only the literals. */
const boolParam =
  (field: "nearest" | "stable" | "include_docs" | "include_geoms" | "wrap" | "geodesic"): Converter =>
  (name, value) =>
    value === "true" || value === "false" ? right({ field, value: value === "true" }) : left(invalidValue("boolean", name, value));

/** `to_bbox/2`: 4, 6 or 8 comma-separated floats (empty tokens dropped, as `string:tokens/2`). */
const bboxParam =
  (field: "bbox" | "vbox"): Converter =>
  (name, value) => {
    const tokens = value.split(",").filter((token) => token !== "");
    if (![4, 6, 8].includes(tokens.length)) return left(invalidValue("bounding box", name, value));
    const numbers: number[] = [];
    for (const token of tokens) {
      const decoded = erlangFloat(token);
      if (decoded === undefined) return left(invalidValue("float", name, token));
      numbers.push(decoded);
    }
    return right({ field, value: numbers });
  };

const relationParam: Converter = (name, value) => {
  const decoded = decodeWith(RelationC, "filter name", name, value);
  return isLeft(decoded) ? decoded : right({ field: "relation", value: decoded.right });
};

/** `to_limit/2`: a non-negative integer, at most `max_limit`. */
const limitParam: Converter = (_name, value, maxLimit) => {
  const decoded = decodeWith(NonNegativeIntegerC, "positive integer", "limit", value);
  if (isLeft(decoded)) return decoded;
  if (decoded.right > maxLimit) return left(`Limit must be less than or equal to ${maxLimit}`);
  return right({ field: "limit", value: decoded.right });
};

const skipParam: Converter = (name, value) => {
  const decoded = decodeWith(NonNegativeIntegerC, "positive integer", name, value);
  return isLeft(decoded) ? decoded : right({ field: "skip", value: decoded.right });
};

/** `to_stale/2`: ok, update_after, or a boolean (true behaves as ok). */
const staleParam: Converter = (name, value) => {
  if (value === "ok" || value === "update_after") return right({ field: "stale", value });
  const decoded = decodeWith(ErlangBooleanC, "boolean", name, value);
  return isLeft(decoded) ? decoded : right({ field: "stale", value: decoded.right === "true" ? "ok" : false });
};

const bookmarkParam: Converter = (name, value) => {
  const decoded = parseBookmark(name, value);
  return isLeft(decoded) ? decoded : right({ field: "bookmark", value: decoded.right });
};

const formatParam: Converter = (_name, value) => {
  const decoded = decodeWith(FormatNameC, "format name", "format", value);
  return isLeft(decoded) ? decoded : right({ field: "format", value: formatOf(decoded.right) });
};

const sridParam =
  (field: "req_srid" | "resp_srid"): Converter =>
  (name, value) =>
    value === EPSG_4326_URN
      ? right({ field, value })
      : left(`Unsupported ${name}: ${JSON.stringify(value)}; upholster indexes and answers in ${EPSG_4326_URN} only`);

const wktParam: Converter = (_name, value) => right({ field: "wkt", value });

/** hastings_httpd:search_parameters/0, plus upholster's extensions. */
const PARAMETERS: Readonly<Record<string, Converter>> = {
  g: wktParam,
  geometry: wktParam,
  bbox: bboxParam("bbox"),
  x: floatParam("x"),
  y: floatParam("y"),
  r: floatParam("r"),
  x_range: floatParam("x_range"),
  y_range: floatParam("y_range"),
  nearest: boolParam("nearest"),
  filter: relationParam,
  srid: sridParam("req_srid"),
  response_srid: sridParam("resp_srid"),
  vbox: bboxParam("vbox"),
  start: floatParam("t_start"),
  end: floatParam("t_end"),
  limit: limitParam,
  skip: skipParam,
  stale: staleParam,
  stable: boolParam("stable"),
  include_docs: boolParam("include_docs"),
  include_geoms: boolParam("include_geoms"),
  bookmark: bookmarkParam,
  format: formatParam,
  lon: floatParam("x"),
  lat: floatParam("y"),
  radius: floatParam("r"),
  rangex: floatParam("x_range"),
  rangey: floatParam("y_range"),
  relation: relationParam,
  startIndex: skipParam,
  srs: sridParam("req_srid"),
  responseSrs: sridParam("resp_srid"),
  // upholster extensions
  wrap: boolParam("wrap"),
  geodesic: boolParam("geodesic"),
};

type ParamSource = URLSearchParams | Readonly<Record<string, string | readonly string[] | undefined>>;

function parameterPairs(params: ParamSource): [string, string][] {
  if (params instanceof URLSearchParams) return [...params];
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === "string") pairs.push([name, value]);
    else if (Array.isArray(value)) for (const v of value as unknown[]) if (typeof v === "string") pairs.push([name, v]);
  }
  return pairs;
}

function convertAll(pairs: readonly [string, string][], maxLimit: number): Either<string, Converted[]> {
  const converted: Converted[] = [];
  for (const [name, value] of pairs) {
    if (name === "" || !Object.hasOwn(PARAMETERS, name)) continue;
    const result = PARAMETERS[name]!(name, value, maxLimit);
    if (isLeft(result)) return result;
    converted.push(result.right);
  }
  return right(converted);
}

type FieldValue<F extends Converted["field"]> = Extract<Converted, { field: F }>["value"];

const first = <F extends Converted["field"]>(all: readonly Converted[], field: F): FieldValue<F> | undefined =>
  all.find((c) => c.field === field)?.value as FieldValue<F> | undefined;

const last = <F extends Converted["field"]>(all: readonly Converted[], field: F): FieldValue<F> | undefined =>
  all.findLast((c) => c.field === field)?.value as FieldValue<F> | undefined;

/** hastings_httpd:get_geometry/1. */
function queryShape(all: readonly Converted[]): Either<string, QueryShape> {
  const wkt = first(all, "wkt");
  const bbox = first(all, "bbox");
  const [x, y, r, rangeX, rangeY] = (["x", "y", "r", "x_range", "y_range"] as const).map((f) => first(all, f));
  const shapes: QueryShape[] = [];
  if (wkt !== undefined) shapes.push({ kind: "wkt", wkt });
  if (bbox !== undefined) shapes.push({ kind: "bbox", coordinates: bbox });
  if (x !== undefined && y !== undefined && r !== undefined) shapes.push({ kind: "circle", x, y, radiusM: r });
  if (x !== undefined && y !== undefined && rangeX !== undefined && rangeY !== undefined) {
    shapes.push({ kind: "ellipse", x, y, rangeXM: rangeX, rangeYM: rangeY });
  }
  if (shapes.length === 0) return left("No geometry query specified.");
  if (shapes.length > 1) return left("Multiple geometry queries specified.");
  return right(shapes[0]!);
}

/** hastings_httpd:get_format/2: the parameter, else an exact Accept value, else the default. */
function responseFormat(all: readonly Converted[], options: GeoQueryOptions): GeoFormat {
  const fromParam = last(all, "format");
  if (fromParam !== undefined) return fromParam;
  const accepted = options.accept === undefined ? undefined : FormatNameC.decode(options.accept);
  return accepted !== undefined && !isLeft(accepted) ? formatOf(accepted.right) : (options.defaultFormat ?? "view");
}

/** The default relation and the multi-dimensional bbox check of set_record_fields/2. */
function queryRelation(shape: QueryShape, nearest: boolean, given: Relation | undefined): Either<string, Relation> {
  if (shape.kind === "bbox" && shape.coordinates.length > 4) {
    return given === undefined || given === "none" ? right("none") : left("filter_with_md_bbox");
  }
  if (given !== undefined) return right(given);
  return right(shape.kind === "bbox" || nearest ? "none" : "intersects");
}

function checkExtensions(query: GeoQuery): string | undefined {
  if (query.wrap && (query.shape.kind !== "bbox" || query.nearest)) return "wrap=true applies to bbox queries without nearest=true";
  if (query.geodesic && query.nearest) return "geodesic=true does not combine with nearest=true";
  return undefined;
}

export function decodeGeoQuery(params: ParamSource, options: GeoQueryOptions = {}): Either<GeoQueryError, GeoQuery> {
  try {
    const converted = convertAll(parameterPairs(params), options.maxLimit ?? DEFAULT_MAX_LIMIT);
    if (isLeft(converted)) return left(queryParseError(converted.left));
    const all = converted.right;
    const shape = queryShape(all);
    if (isLeft(shape)) return left(queryParseError(shape.left));
    const format = responseFormat(all, options);
    const nearest = last(all, "nearest") ?? false;
    const relation = queryRelation(shape.right, nearest, last(all, "relation"));
    if (isLeft(relation)) return left(queryParseError(relation.left));
    const query: GeoQuery = {
      shape: shape.right,
      relation: relation.right,
      nearest,
      limit: last(all, "limit") ?? DEFAULT_LIMIT,
      skip: last(all, "skip") ?? 0,
      bookmark: last(all, "bookmark") ?? emptyBookmark,
      stale: last(all, "stale") ?? false,
      stable: last(all, "stable") ?? false,
      includeDocs: last(all, "include_docs") ?? false,
      includeGeoms: last(all, "include_geoms") ?? true,
      format,
      wrap: last(all, "wrap") ?? false,
      geodesic: last(all, "geodesic") ?? false,
    };
    const extensionError = checkExtensions(query);
    return extensionError === undefined ? right(query) : left(queryParseError(extensionError));
  } catch (error) {
    // Defence in depth for the fuzzed contract: nothing above should throw.
    return left(queryParseError(`Invalid query: ${(error as Error).message}`));
  }
}
