/**
 * hastings' radius and ellipse polygon, computed here as jsts'
 * `GeometricShapeFactory.createCircle` computes it (centre, width and
 * height into an envelope, then `n` points at equal angles), operation for
 * operation, so the coordinates are bit-for-bit jsts's (and the oracle's
 * WKT); the jsts polygon is built from them only when a relation needs it.
 */

export interface EllipseRing {
  /** Closed: n + 1 points, the last equal to the first; counter-clockwise. */
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  /** The radii and centre createEllipse derives from its envelope (what the vertices lie around). */
  readonly radiusX: number;
  readonly radiusY: number;
  readonly centreX: number;
  readonly centreY: number;
}

/** `Envelope(x1, x2, y1, y2)`: the smaller of each pair is the minimum. */
const ordered = (a: number, b: number): [number, number] => (a < b ? [a, b] : [b, a]);

export function ellipseRing(centreX: number, centreY: number, halfWidthX: number, halfWidthY: number, vertices: number): EllipseRing {
  const width = halfWidthX * 2;
  const height = halfWidthY * 2;
  const [minX, maxX] = ordered(centreX - width / 2, centreX + width / 2);
  const [minY, maxY] = ordered(centreY - height / 2, centreY + height / 2);
  // Envelope.getWidth(): 0 for a null envelope (max < min: only with NaN here).
  const radiusX = (maxX < minX ? 0 : maxX - minX) / 2.0;
  const radiusY = (maxY < minY ? 0 : maxY - minY) / 2.0;
  const ringCentreX = minX + radiusX;
  const ringCentreY = minY + radiusY;
  const xs = new Float64Array(vertices + 1);
  const ys = new Float64Array(vertices + 1);
  for (let i = 0; i < vertices; i++) {
    const angle = i * ((2 * Math.PI) / vertices);
    xs[i] = radiusX * Math.cos(angle) + ringCentreX;
    ys[i] = radiusY * Math.sin(angle) + ringCentreY;
  }
  xs[vertices] = xs[0]!;
  ys[vertices] = ys[0]!;
  return { xs, ys, radiusX, radiusY, centreX: ringCentreX, centreY: ringCentreY };
}
