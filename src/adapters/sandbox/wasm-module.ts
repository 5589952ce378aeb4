/**
 * The QuickJS WebAssembly module, with strings copied into it by the host's
 * native UTF-8 encoder.
 *
 * `context.newString` writes its argument into the module's heap with the
 * Emscripten runtime's `lengthBytesUTF8` and `stringToUTF8`, two JavaScript
 * loops over the string's characters: about 1.4 µs of the 1.9 µs it took for
 * a 425-character document, on every batch. The module object is ours to
 * wrap (a variant's module loader, as the library's own `newVariant` does), so
 * its two functions are replaced by `Buffer.byteLength` and
 * `TextEncoder.encodeInto`, which write the same bytes for every well-formed
 * string. A string with a lone surrogate (which those two would write as
 * U+FFFD, unlike Emscripten) goes to the originals, so every string reaches
 * the guest exactly as before.
 *
 * That `newString` uses these two functions is the library's internal
 * (quickjs-emscripten-core 0.32): loading fails loudly if the module lacks
 * them, and test/sandbox/wasm-module.test.ts fails if `newString` stops
 * calling them.
 */
import type { QuickJSEmscriptenModule, QuickJSSyncVariant } from "quickjs-emscripten-core";
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";

type Unwrapped<T> = T | { default: T } | { default: { default: T } };

/** Either module shape (the package's types say CommonJS, a dynamic import gives ESM), as the library unwraps it. */
const unwrap = <T extends object>(value: Unwrapped<T>): T => {
  if ("default" in value && typeof value.default === "object" && value.default !== null) return unwrap(value.default as Unwrapped<T>);
  return value as T;
};

const utf8 = new TextEncoder();

// ES2024, in Node since 20: not in this project's lib.
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Replaces the module's string writers with native ones; throws if it has none to replace. */
export const useNativeUtf8 = (module: QuickJSEmscriptenModule): void => {
  const originalLength = module.lengthBytesUTF8;
  const originalWrite = module.stringToUTF8;
  if (typeof originalLength !== "function" || typeof originalWrite !== "function" || !(module.HEAPU8 instanceof Uint8Array)) {
    throw new Error("the QuickJS module has no lengthBytesUTF8/stringToUTF8/HEAPU8 to replace: quickjs-emscripten changed, see wasm-module.ts");
  }
  module.lengthBytesUTF8 = (text: string): number => (isWellFormed(text) ? Buffer.byteLength(text, "utf8") : originalLength(text));
  // Typed as void, but Emscripten's returns the bytes written (the NUL not counted): so does this one.
  module.stringToUTF8 = (text, pointer, maxBytes): number => {
    if (!(maxBytes !== undefined && maxBytes > 0) || !isWellFormed(text)) return originalWrite(text, pointer, maxBytes) as unknown as number;
    // HEAPU8 read now: the heap may have grown (a new buffer) since the last call.
    const heap = module.HEAPU8;
    // As Emscripten: at most maxBytes - 1 bytes of whole characters, then a NUL.
    const { written } = utf8.encodeInto(text, heap.subarray(pointer, pointer + maxBytes - 1));
    heap[pointer + written] = 0;
    return written;
  };
};

/** A variant of `base` whose module gets `prepare` before the library sees it. */
export const preparedVariant = (base: QuickJSSyncVariant, prepare: (module: QuickJSEmscriptenModule) => void): QuickJSSyncVariant => ({
  ...base,
  importModuleLoader: async () => {
    const load = unwrap(await base.importModuleLoader());
    return async (options) => {
      const module = await load(options);
      prepare(module);
      return module;
    };
  },
});

/** The build this adapter runs, as its package gives it. */
export const baseVariant = async (): Promise<QuickJSSyncVariant> =>
  // A dynamic import: loaded on first use, not when this file is.
  unwrap<QuickJSSyncVariant>(await import("@jitl/quickjs-wasmfile-release-sync"));

export const loadQuickJSModule = async (): Promise<QuickJSWASMModule> => newQuickJSWASMModuleFromVariant(preparedVariant(await baseVariant(), useNativeUtf8));
