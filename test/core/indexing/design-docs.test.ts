import { describe, expect, it } from "vitest";
import { autoUpdates, namedIndexesOf, refusalOf, selectIndexes, viewIndexesOf, type InspectedIndex } from "../../../src/core/indexing/index.js";

const VIEWS = { views: { a: { map: "function (doc) { emit(doc.a); }" }, b: { map: "function (doc) { emit(doc.b); }" } } };
const JS: ReadonlySet<string> = new Set(["javascript", "query"]);

describe("ken's design doc rules", () => {
  it("autoupdate: false, per index type, or on", () => {
    expect(autoUpdates({}, "views")).toBe(true);
    expect(autoUpdates({ autoupdate: false }, "views")).toBe(false);
    expect(autoUpdates({ autoupdate: { views: false } }, "views")).toBe(false);
    expect(autoUpdates({ autoupdate: { views: false } }, "indexes")).toBe(true);
    expect(autoUpdates({ autoupdate: { st_indexes: false } }, "st_indexes")).toBe(false);
    expect(autoUpdates({ autoupdate: "nonsense" }, "views")).toBe(true);
  });

  it("only allowed languages; garbage is skipped with a reason, never thrown", () => {
    expect(refusalOf({ id: "_design/x", body: { language: "erlang" } }, "views", JS)).toMatch(/erlang/);
    expect(refusalOf({ id: "_design/x", body: { language: 42 } }, "views", JS)).toMatch(/not a string/);
    expect(refusalOf({ id: "_design/x", body: "garbage" }, "views", JS)).toMatch(/not a JSON object/);
    expect(refusalOf({ id: "_design/x", body: { language: "query" } }, "views", JS)).toBeUndefined();
    expect(refusalOf(undefined, "views", JS)).toMatch(/gone/);
  });

  it("one view group per design doc; identical groups are one index with every design doc", () => {
    const found = viewIndexesOf([
      { id: "_design/b", body: VIEWS },
      { id: "_design/a", body: { ...VIEWS, autoupdate: false } },
      { id: "_design/c", body: { views: { z: { map: "function (doc) {}" } } } },
      { id: "_design/bad", body: { views: { x: { reduce: "_sum" } } } },
      { id: "_design/none", body: { validate_doc_update: "function () {}" } },
      { id: "_design/junk", body: [1, 2] },
    ]);
    expect(found.indexes.map((i) => ({ ddocs: i.ddocs, entry: i.entry, field: i.field }))).toEqual([
      { ddocs: ["_design/a", "_design/b"], entry: "a", field: "views" },
      { ddocs: ["_design/c"], entry: "z", field: "views" },
    ]);
    expect(found.problems.map((p) => p.ddoc).sort()).toEqual(["_design/bad", "_design/junk"]);
  });

  it("named indexes (search, nouveau, geo): one per entry with an index function", () => {
    const found = namedIndexesOf("search", "indexes", [
      { id: "_design/s", body: { indexes: { t: { index: "function (doc) { index('t', doc.t); }" }, broken: { analyzer: "standard" } } } },
      { id: "_design/x", body: { indexes: "no" } },
    ]);
    expect(found.indexes.map((i) => i.name)).toEqual(["_design/s/t"]);
    expect(found.problems.map((p) => p.reason)).toEqual(["indexes.broken has no index function", "indexes is not an object"]);
  });

  it("a shared index is built when one of its design docs wants it; a stage whatever it says", () => {
    const [shared] = viewIndexesOf([
      { id: "_design/a", body: { ...VIEWS, autoupdate: false } },
      { id: "_design/b", body: VIEWS },
    ]).indexes;
    const inspected: InspectedIndex[] = [{ spec: shared! }];
    const both = [
      { id: "_design/a", body: { ...VIEWS, autoupdate: false } },
      { id: "_design/b", body: VIEWS },
    ];
    expect(selectIndexes(inspected, both, JS, new Set()).selected).toHaveLength(1);
    const off = [{ id: "_design/a", body: { ...VIEWS, autoupdate: false } }];
    const [alone] = viewIndexesOf(off).indexes;
    expect(selectIndexes([{ spec: alone! }], off, JS, new Set()).selected).toHaveLength(0);
    expect(selectIndexes([{ spec: alone! }], off, JS, new Set(["_design/a"])).selected).toHaveLength(1);
  });
});
