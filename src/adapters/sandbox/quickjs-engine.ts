/**
 * The sandboxing guest (guest.ts): a QuickJS runtime (its own heap, memory
 * limit, stack limit and interrupt handler) with one context holding the
 * prelude and one design doc's functions. A throw (`EngineCrashed`) means the
 * WebAssembly instance itself failed (a trap), and the module must not be
 * used again.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import type { IndexFunctionKind, SandboxLimits } from "../../ports/sandbox.js";
import { classifyStop, EngineCrashed, type EngineLoader, type Guest, type GuestCall } from "./guest.js";
import { GUEST_PRELUDE } from "./guest-prelude.js";
import { loadQuickJSModule } from "./wasm-module.js";

/** Time the prelude may take to evaluate; it is ours and takes about a millisecond. */
const PRELUDE_TIMEOUT_MS = 10_000;

type EntryName = "compile" | "refuse" | "load" | "loadRun" | "run" | "progress";
const ENTRY_NAMES: readonly EntryName[] = ["compile", "refuse", "load", "loadRun", "run", "progress"];

const describeHostError = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

export class GuestEngine implements Guest {
  private deadlineMs = 0;
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly entries = new Map<EntryName, QuickJSHandle>();
  private disposed = false;

  constructor(
    module: QuickJSWASMModule,
    private readonly limits: SandboxLimits,
    stackBytes: number,
  ) {
    this.runtime = crashGuard(() => module.newRuntime());
    this.runtime.setMemoryLimit(limits.memoryBytes);
    this.runtime.setMaxStackSize(stackBytes);
    this.runtime.setInterruptHandler(() => Date.now() > this.deadlineMs);
    this.context = this.runtime.newContext();
    this.loadPrelude();
  }

  /** "" when the function compiled, else why not. */
  /** @param readsOnly the function cannot write to its document, so it may share a parsed copy */
  compile(index: number, kind: IndexFunctionKind, source: string, readsOnly: boolean): GuestCall<string> {
    return this.callForString("compile", [index, kind, source, readsOnly ? 1 : 0], this.limits.timeoutMsPerDoc);
  }

  refuse(index: number, kind: IndexFunctionKind, message: string): GuestCall<string> {
    return this.callForString("refuse", [index, kind, message], this.limits.timeoutMsPerDoc);
  }

  load(batchText: string, deadlineMs: number): GuestCall<string> {
    return this.callForString("load", [batchText], deadlineMs - Date.now());
  }

  /** A fresh batch loaded and run from its start in one crossing; stopped while loading, `progress()` has d = -1. */
  loadRun(batchText: string, deadlineMs: number): GuestCall<string> {
    return this.callForString("loadRun", [batchText], deadlineMs - Date.now());
  }

  run(fromDoc: number, fromFunction: number, carry: string, overrides: string, deadlineMs: number): GuestCall<string> {
    return this.callForString("run", [fromDoc, fromFunction, carry, overrides], deadlineMs - Date.now());
  }

  /**
   * Where the last run stopped. Called after a stop, with room above the
   * memory limit: a run that ran out of memory must still be able to report.
   */
  progress(): GuestCall<string> {
    this.runtime.setMemoryLimit(2 * this.limits.memoryBytes);
    try {
      return this.callForString("progress", [], this.limits.timeoutMsPerDoc);
    } finally {
      this.runtime.setMemoryLimit(this.limits.memoryBytes);
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    crashGuard(() => {
      for (const handle of this.entries.values()) handle.dispose();
      this.context.dispose();
      this.runtime.dispose();
    });
  }

  private loadPrelude(): void {
    this.deadlineMs = Date.now() + PRELUDE_TIMEOUT_MS;
    const result = crashGuard(() => this.context.evalCode(GUEST_PRELUDE, "prelude.js"));
    if (result.error !== undefined) {
      const message = JSON.stringify(this.context.dump(result.error));
      result.error.dispose();
      this.dispose();
      throw new EngineCrashed(`the sandbox prelude failed to load: ${message}`);
    }
    for (const name of ENTRY_NAMES) this.entries.set(name, this.context.getProp(result.value, name));
    result.value.dispose();
  }

  private callForString(name: EntryName, args: readonly (string | number)[], timeoutMs: number): GuestCall<string> {
    return crashGuard(() => {
      const fn = this.entries.get(name);
      if (fn === undefined || this.disposed) throw new EngineCrashed("the engine was disposed");
      const handles = args.map((arg) => (typeof arg === "number" ? this.context.newNumber(arg) : this.context.newString(arg)));
      this.deadlineMs = Date.now() + Math.max(0, timeoutMs);
      const result = this.context.callFunction(fn, this.context.undefined, ...handles);
      for (const handle of handles) handle.dispose();
      if (result.error !== undefined) {
        const stop = classifyStop(this.context.dump(result.error));
        result.error.dispose();
        return stop;
      }
      // Every entry returns a string but load (a count): QuickJS's ToString gives it as String() would, without asking the type first.
      const value = this.context.getString(result.value);
      result.value.dispose();
      return { ok: true, value };
    });
  }
}

/** A host-side exception from the bindings is a trap in the instance (or a host stack overflow): fatal for the module. */
const crashGuard = <T>(action: () => T): T => {
  try {
    return action();
  } catch (error) {
    if (error instanceof EngineCrashed) throw error;
    throw new EngineCrashed(describeHostError(error));
  }
};

/** Guests in one QuickJS WebAssembly instance per load, each with `stackBytes` of guest stack. */
export const quickJsGuests =
  (stackBytes: number): EngineLoader =>
  async () => {
    const module = await loadQuickJSModule();
    return (limits) => new GuestEngine(module, limits, stackBytes);
  };
