import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isLeft, isRight } from "fp-ts/lib/Either.js";
import { SmooshSnapshotC, type SmooshSnapshot } from "../../../src/core/compaction/snapshot.js";
import type { CompactionObject } from "../../../src/core/compaction/types.js";

const objectArb: fc.Arbitrary<CompactionObject> = fc.oneof(
  fc.record({ kind: fc.constant("db" as const), db: fc.string() }),
  fc.record({ kind: fc.constant("view" as const), db: fc.string(), ddoc: fc.string().map((s) => `_design/${s}`) }),
  fc.record({ kind: fc.constant("cleanup" as const), db: fc.string() }),
);
const snapshotArb: fc.Arbitrary<SmooshSnapshot> = fc.record({
  version: fc.constant(1 as const),
  savedAtMs: fc.integer({ min: 0, max: 2 ** 45 }),
  channels: fc.dictionary(
    // Channel names as the config lets them be (not ones every object inherits, such as "__proto__").
    fc.string().filter((name) => !(name in Object.prototype)),
    fc.array(fc.record({ object: objectArb, priority: fc.oneof(fc.constant(Infinity), fc.double({ min: 0, max: 1e15, noNaN: true })) })),
  ),
});

describe("SmooshSnapshotC", () => {
  it("round-trips through JSON text, Infinity included", () => {
    fc.assert(
      fc.property(snapshotArb, (snapshot) => {
        const text = JSON.stringify(SmooshSnapshotC.encode(snapshot));
        const back = SmooshSnapshotC.decode(JSON.parse(text));
        expect(isRight(back)).toBe(true);
        if (isRight(back)) expect(back.right).toEqual(snapshot);
      }),
    );
  });
  it("rejects what it did not write", () => {
    for (const bad of [
      null,
      { version: 2, savedAtMs: 0, channels: {} },
      { version: 1, savedAtMs: 0, channels: { a: [{ object: { kind: "db" }, priority: 1 }] } },
      { version: 1, savedAtMs: 0, channels: { a: [{ object: { kind: "db", db: "x" }, priority: null }] } },
      { version: 1, savedAtMs: 0, channels: { a: [{ object: { kind: "db", db: "x" }, priority: -1 }] } },
    ]) {
      expect(isLeft(SmooshSnapshotC.decode(bad))).toBe(true);
    }
  });
});
