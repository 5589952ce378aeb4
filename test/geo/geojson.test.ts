import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isLeft, isRight } from "fp-ts/lib/Either.js";
import { geometryFacts, trimDimensions, validateGeoJson, type GeoJsonGeometry } from "../../src/core/geo/index.js";

const reasonFor = (u: unknown): string => {
  const r = validateGeoJson(u);
  if (isRight(r)) throw new Error(`expected ${JSON.stringify(u)} to be refused`);
  return r.left;
};

const square = [
  [0, 0],
  [1, 0],
  [1, 1],
  [0, 1],
  [0, 0],
];

describe("validateGeoJson", () => {
  it("accepts every geometry type, with 2 to 4 numbers per position", () => {
    const valid: GeoJsonGeometry[] = [
      { type: "Point", coordinates: [1, 2] },
      { type: "Point", coordinates: [1, 2, 3] },
      { type: "Point", coordinates: [1, 2, 3, 4] },
      { type: "LineString", coordinates: [[0, 0], [1, 1]] },
      { type: "Polygon", coordinates: [square] },
      { type: "MultiPoint", coordinates: [[0, 0]] },
      { type: "MultiLineString", coordinates: [[[0, 0], [1, 1]]] },
      { type: "MultiPolygon", coordinates: [[square]] },
      { type: "GeometryCollection", geometries: [{ type: "Point", coordinates: [1, 2] }] },
    ];
    for (const g of valid) expect(validateGeoJson(g)).toEqual({ _tag: "Right", right: g });
  });

  it("keeps only type and coordinates (or geometries), as easton returns them", () => {
    const r = validateGeoJson({ type: "Point", coordinates: [1, 2], bbox: [1, 2, 1, 2], crs: {}, extra: true });
    expect(r).toEqual({ _tag: "Right", right: { type: "Point", coordinates: [1, 2] } });
  });

  it("names what is wrong", () => {
    expect(reasonFor(null)).toBe("invalid GeoJSON geometry: geometry must be an object");
    expect(reasonFor({ coordinates: [1, 2] })).toBe("invalid GeoJSON geometry: geometry has no type");
    expect(reasonFor({ type: "Feature", geometry: {} })).toBe('invalid GeoJSON geometry: geometry has an unsupported type: "Feature"');
    expect(reasonFor({ type: "Point" })).toBe("invalid GeoJSON geometry: Point has no coordinates");
    expect(reasonFor({ type: "Point", coordinates: [1] })).toBe("invalid GeoJSON geometry: coordinates must be a position of 2 to 4 numbers");
    expect(reasonFor({ type: "Point", coordinates: [1, 2, 3, 4, 5] })).toMatch(/position of 2 to 4 numbers/);
    expect(reasonFor({ type: "Point", coordinates: [1, "2"] })).toBe("invalid GeoJSON geometry: coordinates must hold finite numbers only");
    expect(reasonFor({ type: "Point", coordinates: [1, NaN] })).toMatch(/finite numbers/);
    expect(reasonFor({ type: "LineString", coordinates: [[0, 0], [1, 1, 1]] })).toBe(
      "invalid GeoJSON geometry: mismatched dimensions: coordinates[1] has 3, expected 2",
    );
    expect(reasonFor({ type: "LineString", coordinates: [] })).toBe("invalid GeoJSON geometry: coordinates must not be empty");
    expect(reasonFor({ type: "LineString", coordinates: [[0, 0]] })).toBe("invalid GeoJSON geometry: coordinates must have at least 2 positions");
    expect(reasonFor({ type: "Polygon", coordinates: [] })).toBe("invalid GeoJSON geometry: coordinates must not be empty");
    expect(reasonFor({ type: "Polygon", coordinates: [[[0, 0], [1, 0], [0, 0]]] })).toBe(
      "invalid GeoJSON geometry: coordinates[0] must be a ring of at least 4 positions",
    );
    expect(reasonFor({ type: "Polygon", coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] })).toBe(
      "invalid GeoJSON geometry: coordinates[0] must be a closed ring (first and last positions equal)",
    );
    expect(reasonFor({ type: "MultiPoint", coordinates: [] })).toMatch(/must not be empty/);
    expect(reasonFor({ type: "GeometryCollection", geometries: [] })).toBe("invalid GeoJSON geometry: geometries must not be empty");
    expect(reasonFor({ type: "GeometryCollection" })).toBe("invalid GeoJSON geometry: GeometryCollection has no geometries");
    expect(
      reasonFor({ type: "GeometryCollection", geometries: [{ type: "Point", coordinates: [1, 2] }, { type: "Point", coordinates: [1, 2, 3] }] }),
    ).toBe("invalid GeoJSON geometry: mismatched dimensions: geometries[1].coordinates has 3, expected 2");
  });

  it("never throws, whatever an index function passes", () => {
    fc.assert(
      fc.property(fc.anything(), (u) => {
        const r = validateGeoJson(u);
        if (isLeft(r)) expect(r.left).toMatch(/^invalid GeoJSON geometry: /);
      }),
    );
  });

  it("is not fooled by cycles", () => {
    const cyclic: { type: string; geometries: unknown[] } = { type: "GeometryCollection", geometries: [] };
    cyclic.geometries.push(cyclic);
    expect(isLeft(validateGeoJson(cyclic))).toBe(true);
  });
});

describe("trimDimensions", () => {
  it("cuts positions to the index's dimensions", () => {
    expect(trimDimensions({ type: "Point", coordinates: [1, 2, 3, 4] }, 2)).toEqual({ type: "Point", coordinates: [1, 2] });
    expect(trimDimensions({ type: "LineString", coordinates: [[1, 2, 3], [4, 5, 6]] }, 3)).toEqual({ type: "LineString", coordinates: [[1, 2, 3], [4, 5, 6]] });
    expect(trimDimensions({ type: "GeometryCollection", geometries: [{ type: "MultiPoint", coordinates: [[1, 2, 3]] }] }, 2)).toEqual({
      type: "GeometryCollection",
      geometries: [{ type: "MultiPoint", coordinates: [[1, 2]] }],
    });
  });
});

describe("geometryFacts", () => {
  it("points are their own box and centroid, without jsts", () => {
    expect(geometryFacts({ type: "Point", coordinates: [3, 4] })).toEqual({
      _tag: "Right",
      right: { minX: 3, minY: 4, maxX: 3, maxY: 4, centroidX: 3, centroidY: 4, isPoint: true, isCollection: false, jsts: undefined },
    });
  });

  it("shapes get their envelope and JTS centroid (a hole shifts it)", () => {
    const r = geometryFacts({
      type: "Polygon",
      coordinates: [
        [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]],
        [[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]],
      ],
    });
    if (!isRight(r)) throw new Error(r.left);
    expect(r.right).toMatchObject({ minX: 0, minY: 0, maxX: 4, maxY: 4, isPoint: false, isCollection: false });
    expect(r.right.centroidX).toBeCloseTo(7 / 3, 12);
    expect(r.right.centroidY).toBeCloseTo(7 / 3, 12);
  });
});
