/** st_indexes decoding, signatures and discovery (pure). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeStIndex, decodeStIndexes, geoIndexesOf, stIndexSignature, type StIndexDefinition } from "../../src/core/geo/index.js";

const FN = "function (doc) { if (doc.geometry) st_index(doc.geometry); }";

describe("st_indexes decoding", () => {
  it("defaults: type rtree, 2 dimensions, srid 4326; both srid spellings are one signature", () => {
    const a = decodeStIndex("g", { index: FN });
    const b = decodeStIndex("g", { index: FN, srid: "urn:ogc:def:crs:EPSG::4326", dimensions: 2, type: "rtree", analyzer: "standard" });
    expect(a).toEqual({ _tag: "Right", right: { index: FN, type: "rtree", dimensions: 2, srid: 4326 } });
    expect(b._tag === "Right" && a._tag === "Right" && stIndexSignature(a.right) === stIndexSignature(b.right)).toBe(true);
  });

  it("a bad member names the field and the value; the others still decode", () => {
    const decoded = decodeStIndexes({ st_indexes: { bad: { index: FN, dimensions: 5 }, good: { index: FN }, nofn: { dimensions: 2 }, srid: { index: FN, srid: 3857 }, junk: 7 } });
    expect([...decoded.indexes.keys()]).toEqual(["good"]);
    expect(decoded.problems).toEqual([
      "st_indexes.bad.dimensions = 5: expected 2, 3 or 4",
      "st_indexes.junk is not an object: 7",
      "st_indexes.nofn.index is missing (the index function)",
      'st_indexes.srid.srid = 3857: expected 4326 or "urn:ogc:def:crs:EPSG::4326"',
    ]);
  });

  it("discovery groups design docs by signature, whatever the index names; other languages are problems", () => {
    const found = geoIndexesOf([
      { id: "_design/b", body: { st_indexes: { points: { index: FN } } } },
      { id: "_design/a", body: { st_indexes: { geo: { index: FN }, geo3: { index: FN, dimensions: 3 } } } },
      { id: "_design/c", body: { language: "erlang", st_indexes: { geo: { index: FN } } } },
      { id: "_design/d", body: { views: {} } },
    ]);
    expect(found.indexes.map((spec) => [spec.ddocs, spec.entry, spec.name, spec.type, spec.field])).toEqual([
      [["_design/a", "_design/b"], "geo", "_design/a/geo", "st_indexes", "st_indexes"],
      [["_design/a"], "geo3", "_design/a/geo3", "st_indexes", "st_indexes"],
    ]);
    expect(found.problems.map((p) => p.ddoc)).toEqual(["_design/c"]);
  });
});

const definitionArb: fc.Arbitrary<StIndexDefinition> = fc.record({
  index: fc.string({ minLength: 1 }).filter((s) => s.trim() !== ""),
  type: fc.constantFrom("rtree", "other"),
  dimensions: fc.constantFrom(2 as const, 3 as const, 4 as const),
  srid: fc.constant(4326 as const),
});

describe("signatures (properties)", () => {
  it("the same definition gives the same signature, whatever the key order or extra members", () => {
    fc.assert(
      fc.property(definitionArb, (def) => {
        const shuffled = decodeStIndex("x", { srid: def.srid, dimensions: def.dimensions, analyzer: "ignored", type: def.type, index: def.index });
        return shuffled._tag === "Right" && stIndexSignature(shuffled.right) === stIndexSignature(def);
      }),
      { seed: 1010, numRuns: 200 },
    );
  });

  it("any change of definition, type or dimensions changes the signature", () => {
    fc.assert(
      fc.property(definitionArb, definitionArb, (a, b) => {
        const same = a.index === b.index && a.type === b.type && a.dimensions === b.dimensions;
        return same === (stIndexSignature(a) === stIndexSignature(b));
      }),
      { seed: 1011, numRuns: 300 },
    );
    fc.assert(
      fc.property(definitionArb, fc.constantFrom("index", "type", "dimensions"), (def, field) => {
        const changed = { ...def, ...(field === "index" ? { index: `${def.index} ` } : field === "type" ? { type: `${def.type}x` } : { dimensions: def.dimensions === 2 ? 3 : 2 }) } as StIndexDefinition;
        return stIndexSignature(changed) !== stIndexSignature(def);
      }),
      { seed: 1012, numRuns: 200 },
    );
  });
});
