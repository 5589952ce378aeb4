/**
 * Object keys: unique per object, and a db's objects recognisable by key
 * (a deleted db's watches, checks and failures are forgotten by key).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isKeyOfDb } from "../../../src/core/compaction/object.js";
import { objectKey, type CompactionObject } from "../../../src/core/compaction/index.js";

// CouchDB db names: ^[a-z][a-z0-9_$()+/-]*$ (short ones, so prefixes of each other are common).
const dbNameArb = fc.stringMatching(/^[a-z][a-z0-9_$()+/-]{0,3}$/);
const objectArb: fc.Arbitrary<CompactionObject> = fc.oneof(
  dbNameArb.map((db) => ({ kind: "db" as const, db })),
  fc.tuple(dbNameArb, fc.stringMatching(/^_design\/[a-z0-9]{1,3}$/)).map(([db, ddoc]) => ({ kind: "view" as const, db, ddoc })),
  dbNameArb.map((db) => ({ kind: "cleanup" as const, db })),
  fc.tuple(dbNameArb, fc.stringMatching(/^[0-9a-f]{1,4}$/)).map(([db, signature]) => ({ kind: "geo" as const, db, signature })),
);

describe("object keys", () => {
  it("equal keys exactly for equal objects", () => {
    fc.assert(
      fc.property(objectArb, objectArb, (a, b) => {
        expect(objectKey(a) === objectKey(b)).toBe(JSON.stringify(a) === JSON.stringify(b));
      }),
    );
  });

  it("a key belongs to a db exactly when its object is of that db", () => {
    fc.assert(
      fc.property(objectArb, dbNameArb, (object, db) => {
        expect(isKeyOfDb(objectKey(object), db)).toBe(object.db === db);
      }),
    );
  });

  it("keys sort by db first, as the names do", () => {
    fc.assert(
      fc.property(objectArb, objectArb, (a, b) => {
        fc.pre(a.db !== b.db);
        expect(objectKey(a) < objectKey(b)).toBe(a.db < b.db);
      }),
    );
  });
});
