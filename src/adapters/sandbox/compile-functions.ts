/**
 * A fresh guest with a design doc's functions compiled in it.
 *
 * A source is evaluated, so it runs code: one that loops is refused after the
 * per-doc time limit; one that exhausts memory is refused and the guest
 * rebuilt without it (its leftovers could fill the new heap otherwise).
 */
import type { IndexFunctionSource } from "../../ports/sandbox.js";
import { mayWriteDocument } from "./document-writes.js";
import { EngineCrashed, type Guest } from "./guest.js";

export interface CompiledGuest {
  readonly engine: Guest;
  /** Function index -> why it was refused. */
  readonly refused: ReadonlyMap<number, string>;
}

export const compileGuest = (newGuest: () => Guest, functions: readonly IndexFunctionSource[], knownRefusals: ReadonlyMap<number, string> = new Map()): CompiledGuest => {
  const refused = new Map(knownRefusals);
  // Each pass either succeeds or refuses one more function, so this ends.
  for (;;) {
    const engine = newGuest();
    const exhausted = compileAll(engine, functions, refused);
    if (exhausted === undefined) return { engine, refused };
    engine.dispose();
    refused.set(exhausted, "ran out of memory while evaluating the source");
  }
};

/** Why a source cannot even be tried, if it cannot. */
const unusableSource = (source: unknown): string | undefined => {
  if (typeof source !== "string") return "the source is not a string";
  return source.trim() === "" ? "missing function" : undefined;
};

/** The index of a function whose evaluation exhausted memory, if one did. */
const compileAll = (engine: Guest, functions: readonly IndexFunctionSource[], refused: Map<number, string>): number | undefined => {
  for (const [index, fn] of functions.entries()) {
    const known = refused.get(index) ?? unusableSource(fn.source);
    if (known !== undefined) {
      refuse(engine, index, fn, known, refused);
      continue;
    }
    const result = engine.compile(index, fn.kind, fn.source, !mayWriteDocument(fn.source));
    if (result.ok) {
      if (result.value !== "") refused.set(index, result.value);
    } else if (result.reason === "memory") {
      return index;
    } else {
      refuse(engine, index, fn, result.reason === "interrupted" ? "timed out while evaluating the source" : result.message, refused);
    }
  }
  return undefined;
};

const refuse = (engine: Guest, index: number, fn: IndexFunctionSource, message: string, refused: Map<number, string>): void => {
  refused.set(index, message);
  if (!engine.refuse(index, fn.kind, message).ok) throw new EngineCrashed("the sandbox could not record a compile error");
};
