/**
 * One guest: a context holding the prelude (guest-prelude.ts) and one design
 * doc's functions, whatever engine runs it. Synchronous; the caller decides
 * the thread. The batch runner and the engine host speak only this.
 *
 * Calls return a stop instead of throwing when the guest was interrupted (its
 * deadline passed), ran out of memory, or its own code failed. A throw means
 * the engine itself failed (`EngineCrashed`): nothing made by it may be used
 * again.
 */
import type { IndexFunctionKind, SandboxLimits } from "../../ports/sandbox.js";

export type GuestStop =
  | { readonly ok: false; readonly reason: "interrupted" }
  | { readonly ok: false; readonly reason: "memory" }
  | { readonly ok: false; readonly reason: "error"; readonly message: string };

export type GuestCall<T> = { readonly ok: true; readonly value: T } | GuestStop;

export class EngineCrashed extends Error {
  override readonly name = "EngineCrashed";
}

/** The prelude's entry points, as the host calls them (see guest-prelude.ts for what each returns). */
export interface Guest {
  /** "" when the function compiled, else why not. @param readsOnly the function cannot write to its document */
  compile(index: number, kind: IndexFunctionKind, source: string, readsOnly: boolean): GuestCall<string>;
  refuse(index: number, kind: IndexFunctionKind, message: string): GuestCall<string>;
  load(batchText: string, deadlineMs: number): GuestCall<string>;
  /** A fresh batch loaded and run from its start in one crossing; stopped while loading, `progress()` has d = -1. */
  loadRun(batchText: string, deadlineMs: number): GuestCall<string>;
  run(fromDoc: number, fromFunction: number, carry: string, overrides: string, deadlineMs: number): GuestCall<string>;
  /** Where the last run stopped (also after running out of memory). */
  progress(): GuestCall<string>;
  dispose(): void;
}

/** Makes guests with `limits` in one loaded engine (one WebAssembly instance, say). */
export type GuestMaker = (limits: SandboxLimits) => Guest;

/** Loads an engine: called again after it crashed. */
export type EngineLoader = () => Promise<GuestMaker>;

/** What escaped the prelude's own try/catch: only an interrupt, memory exhaustion, or a broken prelude. */
export const classifyStop = (thrown: unknown): GuestStop => {
  const fields = typeof thrown === "object" && thrown !== null ? (thrown as Record<string, unknown>) : {};
  if (fields.outOfMemory === true) return { ok: false, reason: "memory" };
  if (fields.name === "InternalError" && fields.message === "interrupted") return { ok: false, reason: "interrupted" };
  if (fields.name === "InternalError" && fields.message === "out of memory") return { ok: false, reason: "memory" };
  const message = typeof fields.message === "string" ? `${String(fields.name)}: ${fields.message}` : JSON.stringify(thrown) ?? String(thrown);
  return { ok: false, reason: "error", message: message.slice(0, 2000) };
};
