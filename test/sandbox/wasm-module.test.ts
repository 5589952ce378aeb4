/**
 * The module's string writers replaced by native ones (wasm-module.ts): every
 * string reaches the guest as the library's own writers put it there, and the
 * library still writes strings through them.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { QuickJSContext, QuickJSEmscriptenModule } from "quickjs-emscripten-core";
import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
import { baseVariant, preparedVariant, useNativeUtf8 } from "../../src/adapters/sandbox/wasm-module.js";

let original: QuickJSContext;
/** The module behind `original`, with Emscripten's own writers. */
let emscripten: QuickJSEmscriptenModule;
let native: QuickJSContext;
const calls = { length: 0, write: 0 };

/** Counts the writers' calls after replacing them, to see that newString still uses them. */
const nativeCounted = (module: QuickJSEmscriptenModule): void => {
  useNativeUtf8(module);
  const { lengthBytesUTF8, stringToUTF8 } = module;
  module.lengthBytesUTF8 = (text) => {
    calls.length++;
    return lengthBytesUTF8(text);
  };
  module.stringToUTF8 = (text, pointer, maxBytes) => {
    calls.write++;
    stringToUTF8(text, pointer, maxBytes);
  };
};

beforeAll(async () => {
  const base = await baseVariant();
  original = (await newQuickJSWASMModuleFromVariant(preparedVariant(base, (loaded) => (emscripten = loaded)))).newContext();
  native = (await newQuickJSWASMModuleFromVariant(preparedVariant(base, nativeCounted))).newContext();
});

/** The guest's view of `text`: its length and every UTF-16 code unit. */
const seenByGuest = (context: QuickJSContext, text: string): string => {
  const fn = context.unwrapResult(
    context.evalCode("(function (s) { var units = []; for (var i = 0; i < s.length; i++) units.push(s.charCodeAt(i)); return s.length + ':' + units.join(','); })"),
  );
  const arg = context.newString(text);
  const result = context.unwrapResult(context.callFunction(fn, context.undefined, arg));
  const seen = context.getString(result);
  [fn, arg, result].forEach((handle) => handle.dispose());
  return seen;
};

describe("sandbox: strings written into the QuickJS module", () => {
  it("reach the guest as the library's own writers put them there, lone surrogates and NULs included", () => {
    const samples = ["", "a", "doc", "héllo wörld €", "😀 and 𝄞", "\u0000", "a\u0000b", "\uD800", "a\uDC00b", "\uD83D\uDE00\uD800", "\uDFFF\uD800", "x".repeat(70_000)];
    for (const text of samples) expect(seenByGuest(native, text)).toBe(seenByGuest(original, text));
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => seenByGuest(native, text) === seenByGuest(original, text)),
      { numRuns: 500 },
    );
  });

  it("are written after the heap grows, into its new buffer", () => {
    // Larger than the module's whole initial heap (16 MiB): the allocation grows it.
    const text = `${"é".repeat(9 * 1024 * 1024)}end`;
    const length = native.unwrapResult(native.evalCode("(function (s) { return s.length + ':' + s.slice(-4); })"));
    const arg = native.newString(text);
    const result = native.unwrapResult(native.callFunction(length, native.undefined, arg));
    expect(native.getString(result)).toBe(`${text.length}:éend`);
    [length, arg, result].forEach((handle) => handle.dispose());
  });

  it("go through the replaced writers: the library's newString still calls them", () => {
    const before = { ...calls };
    native.newString("a document of some length, to be written into the heap").dispose();
    expect(calls.length).toBeGreaterThan(before.length);
    expect(calls.write).toBeGreaterThan(before.write);
  });

  it("write the same bytes and return the same count as Emscripten's, cut short by maxBytes too", () => {
    // The same heap behind Emscripten's writers and the native ones.
    const replaced = { lengthBytesUTF8: emscripten.lengthBytesUTF8, stringToUTF8: emscripten.stringToUTF8, get HEAPU8() { return emscripten.HEAPU8; } };
    useNativeUtf8(replaced as unknown as QuickJSEmscriptenModule);
    type Write = QuickJSEmscriptenModule["stringToUTF8"];
    const address = emscripten._malloc(1024);
    const written = (write: Write, text: string, maxBytes: number) => {
      emscripten.HEAPU8.fill(0xff, address, address + 1024);
      const count = write(text, address as unknown as Parameters<Write>[1], maxBytes) as unknown as number;
      return { count, bytes: [...emscripten.HEAPU8.subarray(address, address + maxBytes + 1)] };
    };
    try {
      fc.assert(
        fc.property(fc.string({ unit: "grapheme", maxLength: 100 }), fc.integer({ min: 1, max: 500 }), (text, maxBytes) => {
          expect(replaced.lengthBytesUTF8(text)).toBe(emscripten.lengthBytesUTF8(text));
          expect(written(replaced.stringToUTF8, text, maxBytes)).toEqual(written(emscripten.stringToUTF8, text, maxBytes));
        }),
        { numRuns: 500 },
      );
    } finally {
      emscripten._free(address);
    }
  });

  it("refuses a module without the writers it replaces", () => {
    expect(() => useNativeUtf8({} as QuickJSEmscriptenModule)).toThrow(/quickjs-emscripten changed/);
  });
});
