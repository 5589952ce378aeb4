import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { PMap, TimedKeys } from "../../../src/core/shared/persistent.js";

/**
 * The first of `checks` whose actual value differs from its expected one, named, or undefined.
 * The properties compare hundreds of versions per run with plain comparisons and assert once:
 * an `expect` per comparison made them take a minute on a busy machine.
 */
const firstMismatch = (checks: ReadonlyArray<readonly [string, unknown, unknown]>): string | undefined => {
  for (const [what, actual, expected] of checks) {
    if (!isDeepStrictEqual(actual, expected)) return `${what}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`;
  }
  return undefined;
};

/** Operations on some version: set (value), delete (null); `from` picks the version they start from. */
const ops = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 40 }), fc.option(fc.integer(), { nil: null })), { maxLength: 400, size: "max" });

describe("PMap (a rerooted Map)", () => {
  it("every version keeps its contents, whichever was used last (branches and old versions included)", () => {
    fc.assert(
      fc.property(ops, fc.array(fc.nat(), { maxLength: 50 }), (steps, reads) => {
        const versions: Array<{ map: PMap<number>; model: Map<string, number> }> = [{ map: PMap.empty(), model: new Map() }];
        for (const [from, k, value] of steps) {
          // Mostly the latest version (as the reducer does), sometimes an older one: a branch.
          const base = versions[from % 5 === 0 ? from % versions.length : versions.length - 1]!;
          const key = `k${k}`;
          const model = new Map(base.model);
          if (value === null) model.delete(key);
          else model.set(key, value);
          versions.push({ map: value === null ? base.map.delete(key) : base.map.set(key, value), model });
        }
        const check = ({ map, model }: { map: PMap<number>; model: Map<string, number> }): string | undefined => {
          const checks: [string, unknown, unknown][] = [
            ["size", map.size, model.size],
            ["entries", map.entries(), [...model].sort(([a], [b]) => (a < b ? -1 : 1))],
          ];
          for (let k = 0; k <= 40; k++) {
            checks.push([`get k${k}`, map.get(`k${k}`), model.get(`k${k}`)], [`has k${k}`, map.has(`k${k}`), model.has(`k${k}`)]);
          }
          return firstMismatch(checks);
        };
        const problem = [...reads.map((i) => versions[i % versions.length]!), ...versions].map(check).find((p) => p !== undefined);
        expect(problem).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it("deleting a missing key returns the same map; an undefined value is still present", () => {
    const map = PMap.empty<number | undefined>().set("a", undefined);
    expect(map.delete("b")).toBe(map);
    expect(map.has("a")).toBe(true);
    const without = map.delete("a");
    expect(without.has("a")).toBe(false);
    expect(map.has("a")).toBe(true);
    expect(map.size).toBe(1);
  });
});

describe("TimedKeys (a rerooted Map with a B+ tree in time order)", () => {
  /** Operations: set (time, value) or delete (null), from some version; few distinct times, so ties are common. */
  const timedOps = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 30 }), fc.option(fc.tuple(fc.integer({ min: 0, max: 8 }), fc.integer()), { nil: null })), {
    maxLength: 300,
    size: "max",
  });
  type Model = Map<string, { atMs: number; value: number }>;
  const inOrder = (model: Model) =>
    [...model].map(([key, { atMs, value }]) => ({ key, atMs, value })).sort((a, b) => a.atMs - b.atMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

  it("every version keeps its entries in (time, key) order, its earliest and its takeUntil, whichever was used last", () => {
    fc.assert(
      fc.property(timedOps, fc.array(fc.nat(), { maxLength: 40 }), (steps, reads) => {
        const versions: Array<{ keys: TimedKeys<number>; model: Model }> = [{ keys: TimedKeys.empty(), model: new Map() }];
        for (const [from, k, change] of steps) {
          const base = versions[from % 4 === 0 ? from % versions.length : versions.length - 1]!;
          const key = `k${k}`;
          const model: Model = new Map(base.model);
          if (change === null) model.delete(key);
          else model.set(key, { atMs: change[0], value: change[1] });
          versions.push({ keys: change === null ? base.keys.delete(key) : base.keys.set(key, change[0], change[1]), model });
        }
        const check = ({ keys, model }: { keys: TimedKeys<number>; model: Model }): string | undefined => {
          const expected = inOrder(model);
          const { rest, taken } = keys.takeUntil(4);
          const checks: [string, unknown, unknown][] = [
            ["size", keys.size, model.size],
            ["entries", keys.entries(), expected],
            ["earliest", keys.earliest(), expected[0]],
            ["takeUntil taken", taken, expected.filter((e) => e.atMs <= 4)],
            ["takeUntil rest", rest.entries(), expected.filter((e) => e.atMs > 4)],
            ["truncate", keys.truncate(3).entries(), expected.slice(Math.max(0, expected.length - 3))],
          ];
          for (let k = 0; k <= 30; k++) {
            checks.push([`timeOf k${k}`, keys.timeOf(`k${k}`), model.get(`k${k}`)?.atMs], [`get k${k}`, keys.get(`k${k}`), model.get(`k${k}`)?.value]);
          }
          return firstMismatch(checks);
        };
        const problem = [...reads.map((i) => versions[i % versions.length]!), ...versions].map(check).find((p) => p !== undefined);
        expect(problem).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });
});
