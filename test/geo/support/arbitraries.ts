/**
 * fast-check arbitraries for the geo properties: small worlds where ties
 * are common (points on a coarse grid, shared positions), ids whose UTF-8
 * order differs from UTF-16 order, and query strings of every kind.
 */
import fc from "fast-check";
import type { GeoJsonGeometry } from "../../../src/core/geo/index.js";

/** Coordinates on a half-degree grid in [-5, 5]: distances tie often. */
export const gridCoordinate = fc.integer({ min: -10, max: 10 }).map((n) => n / 2);
/** Micro-degree steps: printed without exponents, as query strings need (Erlang floats). */
export const freeCoordinate = fc.integer({ min: -5_000_000, max: 5_000_000 }).map((n) => n / 1e6);
export const coordinate = fc.oneof(gridCoordinate, freeCoordinate);

export const point: fc.Arbitrary<GeoJsonGeometry> = fc.tuple(coordinate, coordinate).map(([x, y]) => ({ type: "Point", coordinates: [x, y] }));

export const rectangle: fc.Arbitrary<GeoJsonGeometry> = fc
  .tuple(gridCoordinate, gridCoordinate, fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 4 }))
  .map(([x, y, w, h]) => ({
    type: "Polygon",
    coordinates: [
      [
        [x, y],
        [x + w / 2, y],
        [x + w / 2, y + h / 2],
        [x, y + h / 2],
        [x, y],
      ],
    ],
  }));

export const line: fc.Arbitrary<GeoJsonGeometry> = fc
  .array(fc.tuple(coordinate, coordinate), { minLength: 2, maxLength: 4 })
  .map((positions) => ({ type: "LineString", coordinates: positions }));

export const multiPoint: fc.Arbitrary<GeoJsonGeometry> = fc
  .array(fc.tuple(coordinate, coordinate), { minLength: 1, maxLength: 3 })
  .map((positions) => ({ type: "MultiPoint", coordinates: positions }));

export const geometry = fc.oneof({ arbitrary: point, weight: 4 }, { arbitrary: rectangle, weight: 2 }, { arbitrary: line, weight: 1 }, { arbitrary: multiPoint, weight: 1 });

/** Ids from stems whose byte order and code-unit order disagree. */
export const docId = fc
  .tuple(fc.constantFrom("a", "b", "B", "\u00e9", "\u{1F600}", "\uE000", "\uFFFD", "aa", "a\u0000"), fc.nat({ max: 40 }))
  .map(([stem, n]) => `${stem}${n}`);

/** A doc's geometries: mostly one, sometimes two. */
export const docGeometries = fc.array(geometry, { minLength: 1, maxLength: 2 });

/** Distinct docs. */
export const docs = fc.uniqueArray(fc.tuple(docId, docGeometries), { selector: ([id]) => id, minLength: 0, maxLength: 60 });

export type Operation =
  | { readonly op: "upsert"; readonly id: string; readonly geometries: GeoJsonGeometry[] }
  | { readonly op: "remove"; readonly id: string }
  /** Bring an index's trees up to date now (what a search in between would do). */
  | { readonly op: "flush" }
  /** Rebuild the trees with the entries renumbered in spatial order (what the compaction daemon runs). */
  | { readonly op: "compact" };

export const operations: fc.Arbitrary<Operation[]> = fc.array(
  fc.oneof(
    { arbitrary: fc.record({ op: fc.constant("upsert" as const), id: docId, geometries: docGeometries }), weight: 4 },
    { arbitrary: fc.record({ op: fc.constant("remove" as const), id: docId }), weight: 1 },
    { arbitrary: fc.constant({ op: "flush" as const }), weight: 1 },
    { arbitrary: fc.constant({ op: "compact" as const }), weight: 1 },
  ),
  { maxLength: 150 },
);

const relationParam = fc.option(
  fc.constantFrom("none", "intersects", "contains", "contains_properly", "covered_by", "covers", "crosses", "disjoint", "overlaps", "touches", "within"),
  { nil: undefined },
);

/** Query strings of every kind (limit left to the caller). */
export const queryString: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      fc.tuple(gridCoordinate, gridCoordinate, gridCoordinate, gridCoordinate).map(([a, b, c, d]) => `bbox=${a},${b},${c},${d}`),
      fc.tuple(coordinate, coordinate).map(([x, y]) => `g=${encodeURIComponent(`POINT(${x} ${y})`)}`),
      fc.tuple(gridCoordinate, gridCoordinate, gridCoordinate).map(([x, y, d]) => `g=${encodeURIComponent(`LINESTRING(${x} ${y}, ${x + d} ${y - d})`)}`),
      fc
        .tuple(gridCoordinate, gridCoordinate, fc.integer({ min: 1, max: 6 }))
        .map(([x, y, w]) => `g=${encodeURIComponent(`POLYGON((${x} ${y}, ${x + w} ${y}, ${x + w} ${y + w}, ${x} ${y + w}, ${x} ${y}))`)}`),
      fc.tuple(coordinate, coordinate, fc.integer({ min: 0, max: 400_000 })).map(([x, y, r]) => `lon=${x}&lat=${y}&radius=${r}`),
    ),
    relationParam,
    fc.boolean(),
  )
  .map(([geometryParam, relation, nearest]) => [geometryParam, relation === undefined ? "" : `relation=${relation}`, nearest ? "nearest=true" : ""].filter(Boolean).join("&"));
