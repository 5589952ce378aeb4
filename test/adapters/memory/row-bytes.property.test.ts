/** What a commit charges its new rows (views/row-bytes.ts): each writer chunk at its first leaf's compression ratio. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chargeAddedRows, leafCompressionRatio, type SizedRow } from "../../../src/adapters/memory/views/row-bytes.js";
import { defaultStorageModel, viewRowActiveBytes } from "../../../src/adapters/memory/storage-model.js";
import { jsonSize } from "../../../src/adapters/memory/views/json-size.js";

const rowArb = fc.record({
  key: fc.oneof(fc.integer(), fc.string({ maxLength: 30 }), fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 })),
  id: fc.string({ minLength: 1, maxLength: 20 }),
  value: fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 300 })),
});

/** Rows in staging order: chunks ascending, as `stage` numbers them. */
const rowsArb = fc.array(fc.tuple(rowArb, fc.nat({ max: 3 })), { maxLength: 120 }).map((pairs) => {
  let chunk = 0;
  return pairs.map(([row, step]): SizedRow => {
    chunk += step === 0 ? 1 : 0;
    return { ...row, externalBytes: jsonSize(row.key) + jsonSize(row.value) + row.id.length, chunk, activeBytes: 0 };
  });
});

describe("view rows' live bytes", () => {
  it("property: the total is the sum of what each row was charged, and each row is charged at its chunk's ratio", () => {
    fc.assert(
      fc.property(rowsArb, (rows) => {
        const total = chargeAddedRows(defaultStorageModel, rows);
        expect(total).toBe(rows.reduce((sum, row) => sum + row.activeBytes, 0));
        rows.forEach((row, i) => {
          const first = rows.findIndex((other) => other.chunk === row.chunk);
          expect(first).toBeLessThanOrEqual(i);
          expect(row.activeBytes).toBe(viewRowActiveBytes(defaultStorageModel, row.externalBytes, leafCompressionRatio(defaultStorageModel, rows, first)));
          expect(row.activeBytes).toBeGreaterThanOrEqual(defaultStorageModel.viewRowOverheadBytes);
        });
      }),
    );
  });

  it("property: without compression a row costs its JSON; with snappy never more than snappy's bound allows", () => {
    fc.assert(
      fc.property(rowsArb.filter((rows) => rows.length > 0), (rows) => {
        const none = { ...defaultStorageModel, fileCompression: "none" as const };
        chargeAddedRows(none, rows);
        for (const row of rows) expect(row.activeBytes).toBe(viewRowActiveBytes(none, row.externalBytes, 1));
        // snappy's worst case is 32 + n + n/6 (and the marker byte): the ratio stays near 1 even for incompressible rows.
        const ratio = leafCompressionRatio(defaultStorageModel, rows, 0);
        expect(ratio).toBeGreaterThan(0);
        expect(ratio).toBeLessThanOrEqual(1 + 1 / 6 + 33 / 2);
      }),
    );
  });

  it("property: only a chunk's first leaf of rows sets its ratio; rows after it do not change it", () => {
    const bigRowArb = fc.record({ key: fc.integer(), id: fc.string({ minLength: 1, maxLength: 20 }), value: fc.string({ minLength: 100, maxLength: 300 }) });
    const sized = (row: { key: number; id: string; value: string }): SizedRow => ({ ...row, externalBytes: jsonSize(row.key) + jsonSize(row.value) + row.id.length, chunk: 0, activeBytes: 0 });
    fc.assert(
      fc.property(fc.array(bigRowArb, { minLength: 10, maxLength: 30 }), fc.array(bigRowArb, { minLength: 1, maxLength: 5 }), (leaf, after) => {
        const rows = leaf.map(sized);
        const leafBytes = rows.reduce((sum, row) => sum + row.externalBytes + defaultStorageModel.viewEntryTermBytes, 0);
        fc.pre(leafBytes >= defaultStorageModel.viewChunkBytes);
        expect(leafCompressionRatio(defaultStorageModel, [...rows, ...after.map(sized)], 0)).toBe(leafCompressionRatio(defaultStorageModel, rows, 0));
      }),
    );
  });
});
