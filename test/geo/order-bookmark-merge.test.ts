import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isLeft, isRight } from "fp-ts/lib/Either.js";
import {
  advanceBookmark,
  compareHitKeys,
  compareIds,
  decodeBookmark,
  emptyBookmark,
  encodeBookmark,
  mergeShardHits,
  parseBookmark,
  planarDistanceDeg,
  type HitKey,
} from "../../src/core/geo/index.js";

describe("compareIds: UTF-8 byte order", () => {
  it("agrees with comparing the UTF-8 bytes, where UTF-16 order does not", () => {
    expect(compareIds("\uFFFD", "\u{1F600}")).toBeLessThan(0); // EF BF BD < F0 9F 98 80
    expect("\uFFFD" < "\u{1F600}").toBe(false); // JS: 0xFFFD > 0xD83D
    expect(compareIds("a", "ab")).toBeLessThan(0);
    expect(compareIds("", "a")).toBeLessThan(0);
    expect(compareIds("B", "a")).toBeLessThan(0);
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
        expect(Math.sign(compareIds(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 2000 },
    );
  });

  it("orders hits by distance, then id bytes, then the geometry's ordinal", () => {
    const keys: HitKey[] = [
      { distance: 1, id: "b", ordinal: 0 },
      { distance: 0.5, id: "z", ordinal: 0 },
      { distance: 1, id: "a", ordinal: 1 },
      { distance: 1, id: "a", ordinal: 0 },
    ];
    expect([...keys].sort(compareHitKeys)).toEqual([keys[1], keys[3], keys[2], keys[0]]);
  });

  it("planar distance is GEOS's sqrt(dx^2 + dy^2) in degrees", () => {
    expect(planarDistanceDeg(0, 0, 3, 4)).toBe(5);
  });
});

describe("bookmarks", () => {
  const hitKey = fc.record({
    distance: fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }),
    id: fc.string({ unit: "binary" }),
    ordinal: fc.nat({ max: 1000 }),
  });

  it("round-trip exactly, ids and distances included", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), hitKey, { maxKeys: 4 }), (entries) => {
        const bookmark = new Map(Object.entries(entries));
        const text = encodeBookmark(bookmark);
        expect(text).toMatch(/^[A-Za-z0-9_-]*$/);
        const decoded = decodeBookmark(text)!;
        expect([...decoded.keys()]).toEqual([...bookmark.keys()]);
        for (const [shard, key] of bookmark) expect(decoded.get(shard)).toEqual({ ...key, distance: key.distance === 0 ? 0 : key.distance });
      }),
    );
  });

  it("are base64url of the JSON's UTF-8, unpadded: the same text as btoa's alphabet swapped (bookmarks clients hold stay valid)", () => {
    const reference = (bookmark: Map<string, { distance: number; id: string; ordinal: number }>): string => {
      const json = JSON.stringify([1, [...bookmark].map(([shard, key]) => [shard, key.distance, key.id, key.ordinal])]);
      return Buffer.from(json, "utf8").toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    };
    fc.assert(
      fc.property(fc.dictionary(fc.string(), hitKey, { maxKeys: 4 }), (entries) => {
        const bookmark = new Map(Object.entries(entries));
        expect(encodeBookmark(bookmark)).toBe(reference(bookmark));
      }),
      { numRuns: 500 },
    );
  });

  it("anything malformed is hastings' 400 reason, never a throw", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.base64String()), (text) => {
        const r = parseBookmark("bookmark", text);
        if (isLeft(r)) expect(r.left).toBe(`Invalid bookmark value for bookmark: '${JSON.stringify(text)}'`);
      }),
      { numRuns: 1000 },
    );
    const encode = (json: string): string => Buffer.from(json).toString("base64url");
    for (const bad of ['[2,[]]', '[1,[["s","1","a",0]]]', '[1,[["s",1,"a",-1]]]', '{"v":1}', "[1,[[\"s\",1e999,\"a\",0]]]", "null"]) {
      expect(isLeft(parseBookmark("bookmark", encode(bad))), bad).toBe(true);
    }
    expect(isRight(parseBookmark("bookmark", encode('[1,[["s",1.5,"a",0]]]')))).toBe(true);
  });

  it("advance: each hit of the page becomes its shard's key; an empty page keeps the bookmark", () => {
    const start = new Map([["s1", { distance: 0, id: "x", ordinal: 0 }]]);
    expect(advanceBookmark(start, [])).toBe(start);
    const next = advanceBookmark(start, [
      { shard: "s2", distance: 1, id: "a", ordinal: 0 },
      { shard: "s1", distance: 2, id: "b", ordinal: 0 },
      { shard: "s2", distance: 3, id: "c", ordinal: 1 },
    ]);
    expect(Object.fromEntries(next)).toEqual({ s1: { distance: 2, id: "b", ordinal: 0 }, s2: { distance: 3, id: "c", ordinal: 1 } });
    expect(emptyBookmark.size).toBe(0);
  });
});

describe("mergeShardHits (hastings' coordinator)", () => {
  it("sorts every shard's hits, cuts to limit + skip, drops skip", () => {
    const hits = (shard: string, ...distances: number[]) => distances.map((distance, i) => ({ shard, distance, id: `${shard}-${i}`, ordinal: 0 }));
    const merged = mergeShardHits([hits("a", 1, 4, 6), hits("b", 2, 3, 5)], 2, 1);
    expect(merged.map((h) => `${h.shard}:${h.distance}`)).toEqual(["b:2", "b:3"]);
    expect(mergeShardHits([hits("a", 1)], 5, 3)).toEqual([]);
  });

  it("equals sorting everything when shards return sorted prefixes", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat({ max: 20 }), { maxLength: 10 }), { maxLength: 4 }), fc.nat({ max: 10 }), fc.nat({ max: 5 }), (perShard, limit, skip) => {
        const shards = perShard.map((distances, s) =>
          distances
            .map((distance, i) => ({ shard: `s${s}`, distance, id: `d${s}-${i}`, ordinal: 0 }))
            .sort(compareHitKeys)
            .slice(0, limit + skip),
        );
        const everything = perShard
          .flatMap((distances, s) => distances.map((distance, i) => ({ distance, id: `d${s}-${i}`, ordinal: 0 })))
          .sort(compareHitKeys)
          .slice(skip, skip + limit);
        expect(mergeShardHits(shards, limit, skip).map((h) => h.id)).toEqual(everything.map((h) => h.id));
      }),
    );
  });
});
