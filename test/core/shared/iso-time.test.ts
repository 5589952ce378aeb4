import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoOfEpochMs } from "../../../src/core/shared/iso-time.js";

describe("isoOfEpochMs", () => {
  it("equals Date's toISOString for any time from year 0 to 9999", () => {
    const min = Date.parse("0000-01-01T00:00:00.000Z"); // Date.UTC would read year 0 as 1900
    const max = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    fc.assert(fc.property(fc.integer({ min, max }), (ms) => isoOfEpochMs(ms) === new Date(ms).toISOString()));
    for (const ms of [0, -1, Date.UTC(2000, 1, 29), Date.UTC(1900, 2, 1) - 1, Date.UTC(2026, 10, 23, 19, 49, 35, 7)]) {
      expect(isoOfEpochMs(ms)).toBe(new Date(ms).toISOString());
    }
  });
});
