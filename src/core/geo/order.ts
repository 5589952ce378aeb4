/**
 * Result order, always: ascending (distance, doc id), as easton's `Hit`
 * `operator<`: distance between the centroids of query and doc geometry,
 * then the doc id compared as raw UTF-8 bytes (memcmp, shorter first).
 *
 * upholster adds a third key, the geometry's position among its doc's
 * geometries (`ordinal`), so that a doc indexed with two geometries at the
 * same distance still has a strict order; hastings leaves that case to the
 * heap, and a bookmark then skips the second one.
 */
import { geodesicDistanceM } from "./geodesic.js";

export interface HitKey {
  readonly distance: number;
  readonly id: string;
  readonly ordinal: number;
}

const SURROGATE_MIN = 0xd800;
const PRIVATE_USE_MIN = 0xe000;

/**
 * Doc ids in UTF-8 byte order. JS compares UTF-16 code units, which agrees
 * with UTF-8 except between surrogates (code points >= U+10000) and
 * U+E000..U+FFFF; shifting both ranges at the first difference fixes that.
 */
export function compareIds(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let ca = a.charCodeAt(i);
    let cb = b.charCodeAt(i);
    if (ca === cb) continue;
    if (ca >= SURROGATE_MIN && cb >= SURROGATE_MIN) {
      ca = ca >= PRIVATE_USE_MIN ? ca - 0x800 : ca + 0x2000;
      cb = cb >= PRIVATE_USE_MIN ? cb - 0x800 : cb + 0x2000;
    }
    return ca - cb;
  }
  return a.length - b.length;
}

export function compareHitKeys(a: HitKey, b: HitKey): number {
  if (a.distance !== b.distance) return a.distance < b.distance ? -1 : 1;
  return compareIds(a.id, b.id) || a.ordinal - b.ordinal;
}

/** Strictly after the bookmark's key (everything is after no bookmark). */
export const isAfter = (key: HitKey, bookmark: HitKey | undefined): boolean => bookmark === undefined || compareHitKeys(key, bookmark) > 0;

/** GEOS's `Coordinate::distance` (and PostGIS's point distance): sqrt(dx^2 + dy^2), in degrees. */
export const planarDistanceDeg = (ax: number, ay: number, bx: number, by: number): number => {
  const dx = ax - bx;
  const dy = ay - by;
  return Math.sqrt(dx * dx + dy * dy);
};

/** Planar distance with the longitude difference taken the short way round the antimeridian (`wrap=true`). */
export const wrappedPlanarDistanceDeg = (ax: number, ay: number, bx: number, by: number): number => {
  const rawDx = Math.abs(ax - bx) % 360;
  const dx = rawDx > 180 ? 360 - rawDx : rawDx;
  const dy = ay - by;
  return Math.sqrt(dx * dx + dy * dy);
};

/**
 * Geodesic distance in metres (`geodesic=true`); a centroid off the
 * ellipsoid (|latitude| > 90) sorts last, at a finite distance so that
 * bookmarks stay plain JSON.
 */
export const geodesicOrderDistanceM = (ax: number, ay: number, bx: number, by: number): number => {
  const d = geodesicDistanceM(ax, ay, bx, by);
  return Number.isNaN(d) ? Number.MAX_VALUE : d;
};
