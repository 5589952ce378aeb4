/**
 * JTS's (= GEOS's) areal centroid, for the two query shapes whose rings are
 * built here rather than by jsts: a bbox's rectangle and hastings' ellipse
 * polygon. The arithmetic is `Centroid.addShell` + `getCentroid` operation
 * for operation (same terms, same order), so the result is bit-for-bit
 * jsts's and distances order exactly as before, without building the jsts
 * geometry for every query (test/geo/query-shapes.test.ts compares them).
 */

/**
 * The centroid of a closed ring (`xs[0] === xs[n-1]`) given as coordinate
 * arrays, whose orientation the caller knows: JTS weighs triangles by +1
 * for a clockwise shell and -1 for a counter-clockwise one. Undefined when
 * the ring has no area (JTS would fall back to its line centroid).
 */
export function shellCentroid(xs: ArrayLike<number>, ys: ArrayLike<number>, clockwise: boolean): { x: number; y: number } | undefined {
  const sign = clockwise ? 1.0 : -1.0;
  const baseX = xs[0]!;
  const baseY = ys[0]!;
  let cg3x = 0;
  let cg3y = 0;
  let areaSum2 = 0;
  for (let i = 0; i < xs.length - 1; i++) {
    const x1 = xs[i]!;
    const y1 = ys[i]!;
    const x2 = xs[i + 1]!;
    const y2 = ys[i + 1]!;
    const centroid3X = baseX + x1 + x2;
    const centroid3Y = baseY + y1 + y2;
    const area2 = (x1 - baseX) * (y2 - baseY) - (x2 - baseX) * (y1 - baseY);
    cg3x += sign * area2 * centroid3X;
    cg3y += sign * area2 * centroid3Y;
    areaSum2 += sign * area2;
  }
  if (!(Math.abs(areaSum2) > 0.0)) return undefined;
  return { x: cg3x / 3 / areaSum2, y: cg3y / 3 / areaSum2 };
}

/**
 * The centroid of GEOS's envelope geometry for a proper rectangle
 * (`minX < maxX`, `minY < maxY`): `GeometryFactory.toGeometry` makes the
 * clockwise ring (minX,minY) (minX,maxY) (maxX,maxY) (maxX,minY) (minX,minY).
 */
export function rectangleCentroid(minX: number, minY: number, maxX: number, maxY: number): { x: number; y: number } | undefined {
  return shellCentroid([minX, minX, maxX, maxX, minX], [minY, maxY, maxY, minY, minY], true);
}
