/**
 * Seeded random geometries for the PostGIS oracle: valid by construction
 * (star-shaped rings, holes well inside, multi-polygon members in separate
 * cells) so GEOS and JTS judge the same figures, and often snapped to a
 * half-degree grid so that boundaries coincide (touches, covers vs
 * contains, points on edges are where relations differ).
 */
import { nextFloat, seedPrng, type PrngState } from "../../../src/core/shared/prng.js";
import type { GeoJsonGeometry, Position } from "../../../src/core/geo/index.js";

export class Random {
  private state: PrngState;

  constructor(seed: number) {
    this.state = seedPrng(seed);
  }

  float(): number {
    const [value, next] = nextFloat(this.state);
    this.state = next;
    return value;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.float();
  }

  int(min: number, maxInclusive: number): number {
    return Math.floor(this.between(min, maxInclusive + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)]!;
  }
}

/** The area the oracle's data and queries live in (degrees). */
export const WORLD = { minX: -12, minY: -12, maxX: 12, maxY: 12 } as const;

const snap = (v: number): number => Math.round(v * 2) / 2;

export function randomPosition(r: Random, gridded = r.chance(0.5)): [number, number] {
  const x = r.between(WORLD.minX, WORLD.maxX);
  const y = r.between(WORLD.minY, WORLD.maxY);
  return gridded ? [snap(x), snap(y)] : [x, y];
}

/** A closed star-shaped ring around (cx, cy): simple, so a valid shell. */
function starRing(r: Random, cx: number, cy: number, minRadius: number, maxRadius: number): Position[] {
  const vertices = r.int(4, 9);
  // One vertex per sector, in angle order, no gap reaching 180 degrees: the ring is star-shaped, so simple.
  const angles = Array.from({ length: vertices }, (_, i) => ((i + r.between(0, 0.5)) * 2 * Math.PI) / vertices);
  const ring = angles.map((a) => {
    const radius = r.between(minRadius, maxRadius);
    return [cx + radius * Math.cos(a), cy + radius * Math.sin(a)] as Position;
  });
  const reversed = r.chance(0.5) ? ring.reverse() : ring; // orientation is ignored by GEOS and JTS
  return [...reversed, reversed[0]!];
}

const rectangleRing = (minX: number, minY: number, maxX: number, maxY: number): Position[] => [
  [minX, minY],
  [maxX, minY],
  [maxX, maxY],
  [minX, maxY],
  [minX, minY],
];

/** Polygon rings around (cx, cy) within `size`: a gridded rectangle or a star, sometimes with a hole. */
export function randomPolygonRings(r: Random, cx: number, cy: number, size: number): Position[][] {
  if (r.chance(0.5)) {
    const [x0, y0] = [snap(cx), snap(cy)];
    const w = Math.max(0.5, snap(r.between(0.5, size)));
    const h = Math.max(0.5, snap(r.between(0.5, size)));
    const shell = rectangleRing(x0, y0, x0 + w, y0 + h);
    if (w >= 1.5 && h >= 1.5 && r.chance(0.5)) return [shell, rectangleRing(x0 + 0.5, y0 + 0.5, x0 + w - 0.5, y0 + h - 0.5)];
    return [shell];
  }
  const outer = size / 2;
  const shell = starRing(r, cx, cy, outer * 0.6, outer);
  if (r.chance(0.4)) return [shell, starRing(r, cx, cy, outer * 0.1, outer * 0.3)];
  return [shell];
}

function randomLine(r: Random): Position[] {
  const gridded = r.chance(0.5);
  const start = randomPosition(r, gridded);
  const points: Position[] = [start];
  for (let i = r.int(1, 3); i > 0; i--) {
    const [x, y] = points[points.length - 1]!;
    const next: [number, number] = [x! + r.between(-3, 3), y! + r.between(-3, 3)];
    points.push(gridded ? [snap(next[0]), snap(next[1])] : next);
  }
  return points;
}

export function randomGeometry(r: Random, kind = r.pick(["point", "point", "point", "line", "polygon", "polygon", "multi", "collection"] as const)): GeoJsonGeometry {
  switch (kind) {
    case "point":
      return { type: "Point", coordinates: randomPosition(r) };
    case "line":
      return { type: "LineString", coordinates: randomLine(r) };
    case "polygon": {
      const [cx, cy] = randomPosition(r);
      return { type: "Polygon", coordinates: randomPolygonRings(r, cx, cy, r.between(0.5, 4)) };
    }
    case "multi": {
      const which = r.pick(["MultiPoint", "MultiLineString", "MultiPolygon"] as const);
      if (which === "MultiPoint") return { type: which, coordinates: Array.from({ length: r.int(2, 4) }, () => randomPosition(r)) };
      if (which === "MultiLineString") return { type: which, coordinates: Array.from({ length: r.int(2, 3) }, () => randomLine(r)) };
      // Members in separate 6-degree cells, each at most 4 wide: never overlapping.
      const [cx, cy] = randomPosition(r);
      return {
        type: which,
        coordinates: Array.from({ length: r.int(2, 3) }, (_, i) => randomPolygonRings(r, cx + i * 6 - 6, cy, r.between(0.5, 4))),
      };
    }
    case "collection":
      return { type: "GeometryCollection", geometries: [randomGeometry(r, "point"), randomGeometry(r, "line")] };
  }
}

/** A doc's geometries: mostly one, sometimes two (it can then appear twice in results). */
export const randomDocGeometries = (r: Random): GeoJsonGeometry[] =>
  r.chance(0.1) ? [randomGeometry(r), randomGeometry(r)] : [randomGeometry(r)];

const wktPosition = (p: Position): string => `${p[0]} ${p[1]}`;
const wktRing = (ring: readonly Position[]): string => `(${ring.map(wktPosition).join(", ")})`;

/** WKT of a query geometry: points, lines, polygons (with holes). */
export function toWkt(g: GeoJsonGeometry): string {
  switch (g.type) {
    case "Point":
      return `POINT(${wktPosition(g.coordinates)})`;
    case "LineString":
      return `LINESTRING${wktRing(g.coordinates)}`;
    case "Polygon":
      return `POLYGON(${g.coordinates.map(wktRing).join(", ")})`;
    default:
      throw new Error(`no WKT for ${g.type} in the oracle`);
  }
}
