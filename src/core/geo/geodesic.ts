/**
 * The WGS84 ellipsoid (geographiclib): hastings' radius half-widths, and the
 * geodesic distances of upholster's `geodesic=true` mode. Angles in degrees,
 * lengths in metres.
 */
import geographiclib from "geographiclib-geodesic";

const { Geodesic } = geographiclib;
const WGS84 = Geodesic.WGS84;
const DIRECT_OUTPUT = Geodesic.LATITUDE | Geodesic.LONGITUDE | Geodesic.LONG_UNROLL;

/** The point `distanceM` from (lon, lat) along azimuth `azimuthDeg`; longitudes unrolled (may pass +-180). */
export function destination(lon: number, lat: number, azimuthDeg: number, distanceM: number): { readonly lon: number; readonly lat: number } {
  const result = WGS84.Direct(lat, lon, azimuthDeg, distanceM, DIRECT_OUTPUT);
  return { lon: result.lon2 ?? NaN, lat: result.lat2 ?? NaN };
}

/**
 * Half-widths in degrees of hastings' radius/ellipse query (easton's
 * `make_ellipse`: CS-MAP's `CS_azddll` at azimuth 90 for x and 0 for y from
 * the centre, then the coordinate differences). Longitudes are unrolled, so
 * near the antimeridian the half-width stays the intended one.
 */
export function ellipseHalfWidthsDeg(lon: number, lat: number, rangeXM: number, rangeYM: number): { readonly x: number; readonly y: number } {
  const east = destination(lon, lat, 90, rangeXM);
  const north = destination(lon, lat, 0, rangeYM);
  return { x: Math.abs(lon - east.lon), y: Math.abs(lat - north.lat) };
}

/** The ellipsoidal distance in metres; NaN for latitudes outside [-90, 90]. */
export function geodesicDistanceM(lon1: number, lat1: number, lon2: number, lat2: number): number {
  if (Math.abs(lat1) > 90 || Math.abs(lat2) > 90) return NaN;
  return WGS84.Inverse(lat1, lon1, lat2, lon2, Geodesic.DISTANCE).s12 ?? NaN;
}
