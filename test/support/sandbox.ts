/** Helpers shared by the sandbox tests: map sources, compiled sandboxes that get disposed, emitted rows. */
import { expect } from "vitest";
import type { FunctionOutcome, IndexFunctionSource, IndexSandbox, SandboxFactory, SandboxLimits } from "../../src/ports/sandbox.js";

/** Map functions named f0, f1, ... */
export const maps = (...sources: string[]): IndexFunctionSource[] => sources.map((source, i) => ({ name: `f${i}`, kind: "map", source }));

/** A compile that remembers its sandbox in `open`, for the test file to dispose after each test. */
export const compilingInto =
  (factory: SandboxFactory, open: IndexSandbox[]) =>
  async (functions: IndexFunctionSource[], limits?: Partial<SandboxLimits>): ReturnType<SandboxFactory["compile"]> => {
    const result = await factory.compile(functions, limits);
    open.push(result.sandbox);
    return result;
  };

/** `compilingInto`'s sandbox, once the test has checked that every function compiled. */
export const compilingCleanly = (factory: SandboxFactory, open: IndexSandbox[]) => {
  const compile = compilingInto(factory, open);
  return async (functions: IndexFunctionSource[]): Promise<IndexSandbox> => {
    const { sandbox, errors } = await compile(functions);
    expect(errors).toEqual([]);
    return sandbox;
  };
};

/** The rows of a map's success; anything else fails the test, naming what came instead. */
export const emitsOf = (result: FunctionOutcome | undefined): readonly (readonly [unknown, unknown])[] => {
  if (result === undefined || !result.ok || !("emits" in result)) throw new Error(`not a map success: ${JSON.stringify(result)}`);
  return result.emits;
};
