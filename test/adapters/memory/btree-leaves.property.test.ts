/**
 * The b-tree part of the storage model: which leaves a batch touches (the
 * ids' order, `SortedIds`) and what rewriting them costs
 * (`btreeRewriteBytes`). The calibration against CouchDB is in storage.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SortedIds } from "../../../src/adapters/memory/sorted-ids.js";
import { btreeRewriteBytes, dbBtreeShape, defaultStorageModel, leafIndexOf, viewBtreeShape, type BtreeShape } from "../../../src/adapters/memory/storage-model.js";

const model: BtreeShape = dbBtreeShape(defaultStorageModel);
const idArb = fc.string({ unit: fc.constantFrom("a", "b", "c", "A", "0", "-", "_"), minLength: 1, maxLength: 5 });

describe("SortedIds: ranks in by-id order", () => {
  it("ranks stay each id's place when ids leave between queries, and after a reset", () => {
    fc.assert(
      fc.property(fc.uniqueArray(idArb, { minLength: 2, maxLength: 60 }), fc.array(fc.tuple(fc.boolean(), fc.nat()), { maxLength: 30 }), (ids, steps) => {
        const known = new Set<string>(ids.slice(0, ids.length >> 1));
        const index = new SortedIds(() => known);
        let next = known.size;
        for (const [adds, pick] of steps) {
          if (adds && next < ids.length) {
            index.add(ids[next]!);
            known.add(ids[next++]!);
          } else if (known.size > 1) {
            const gone = [...known][pick % known.size]!;
            known.delete(gone);
            index.remove(gone);
          }
          const all = [...known].sort();
          expect(index.ranks(all)).toEqual(all.map((_, i) => i));
        }
        // Replaced wholesale (a view's discarded update): a reset sorts what is there now.
        for (const id of [...known].filter((_, i) => i % 2 === 0)) known.delete(id);
        index.reset();
        const all = [...known].sort();
        expect(index.ranks(all)).toEqual(all.map((_, i) => i));
      }),
    );
  });

  it("ranks are each id's place among all ids, however the ids arrived (in one go or added between queries)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(idArb, { minLength: 1, maxLength: 60 }), fc.array(fc.nat(), { maxLength: 6 }), fc.nat(), (ids, cuts, pickSeed) => {
        const known = new Set<string>();
        const index = new SortedIds(() => known);
        // Ids arrive in chunks; the index answers a query after each chunk.
        const points = [...new Set(cuts.map((c) => c % ids.length))].sort((a, b) => a - b);
        let from = 0;
        for (const to of [...points, ids.length]) {
          for (const id of ids.slice(from, to)) {
            index.add(id);
            known.add(id);
          }
          from = to;
          if (known.size === 0) continue;
          const all = [...known].sort();
          const asked = all.filter((_, i) => (i + pickSeed) % 3 === 0);
          expect(index.ranks(asked)).toEqual(asked.map((id) => all.indexOf(id)).sort((a, b) => a - b));
        }
      }),
    );
  });
});

describe("view trees: leaves cut by bytes", () => {
  it("bigger rows make leaves of fewer rows, never of none", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 100_000 }), (small, extra) => {
        const smallRows = viewBtreeShape(defaultStorageModel, small, small).leafEntries;
        const bigRows = viewBtreeShape(defaultStorageModel, small + extra, small + extra).leafEntries;
        expect(bigRows).toBeGreaterThanOrEqual(1);
        expect(bigRows).toBeLessThanOrEqual(smallRows);
      }),
    );
  });
});

describe("btreeRewriteBytes: touched leaves and the inner nodes above them", () => {
  const leavesArb = (entries: number) => fc.array(fc.integer({ min: 0, max: Math.max(0, leafIndexOf(model, entries - 1)) }), { minLength: 1, maxLength: 300 }).map((l) => l.sort((a, b) => a - b));
  const shape = fc.integer({ min: 1, max: 50_000 }).chain((entries) => fc.record({ entries: fc.constant(entries), leaves: leavesArb(entries), written: fc.integer({ min: 1, max: 300 }) }));

  it("a leaf named twice costs what it costs once (a leaf is rewritten once per commit)", () => {
    fc.assert(
      fc.property(shape, ({ entries, leaves, written }) => {
        const doubled = [...leaves, ...leaves].sort((a, b) => a - b);
        expect(btreeRewriteBytes(model, doubled, written, entries)).toBe(btreeRewriteBytes(model, leaves, written, entries));
      }),
    );
  });

  it("touching one more leaf never costs less; spreading the same writes over more leaves costs more", () => {
    fc.assert(
      fc.property(shape, fc.nat(), ({ entries, leaves, written }, extraSeed) => {
        const leafCount = leafIndexOf(model, entries - 1) + 1;
        const extra = extraSeed % leafCount;
        const more = [...leaves, extra].sort((a, b) => a - b);
        expect(btreeRewriteBytes(model, more, written, entries)).toBeGreaterThanOrEqual(btreeRewriteBytes(model, leaves, written, entries));
      }),
    );
  });

  it("the cost is bounded: at most every touched leaf whole and every inner node on their paths", () => {
    fc.assert(
      fc.property(shape, ({ entries, leaves, written }) => {
        const bytes = btreeRewriteBytes(model, leaves, written, entries);
        const distinct = new Set(leaves).size;
        let depth = 0;
        for (let nodes = Math.ceil(entries / model.leafEntries); nodes > 1; nodes = Math.ceil(nodes / model.innerFanout)) depth++;
        expect(bytes).toBeGreaterThanOrEqual(depth * model.innerNodeBytes);
        expect(bytes).toBeLessThanOrEqual(distinct * (model.leafEntries * model.entryBytes + depth * model.innerNodeBytes));
      }),
    );
  });

  it("consecutive leaves cost less than the same number spread across the tree", () => {
    fc.assert(
      fc.property(fc.integer({ min: 20_000, max: 200_000 }), fc.integer({ min: 2, max: 100 }), (entries, count) => {
        const leafCount = leafIndexOf(model, entries - 1) + 1;
        const consecutive = Array.from({ length: count }, (_, i) => i);
        const spread = Array.from({ length: count }, (_, i) => Math.floor((i * leafCount) / count));
        expect(btreeRewriteBytes(model, consecutive, count, entries)).toBeLessThan(btreeRewriteBytes(model, spread, count, entries));
      }),
    );
  });
});
