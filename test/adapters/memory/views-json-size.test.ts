/** The size of a row's JSON, as the view size model counts it, without stringifying. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonSize } from "../../../src/adapters/memory/views/json-size.js";

const asciiText = fc.string({ unit: fc.constantFrom("a", "Z", "0", " ", "-", "_") });
const asciiJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    asciiText,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(asciiText, tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("jsonSize", () => {
  it("is the length of JSON.stringify for values without escapes or non-ASCII text", () => {
    fc.assert(
      fc.property(asciiJson, (value) => {
        expect(jsonSize(value)).toBe(JSON.stringify(value).length);
      }),
    );
  });
});
