/**
 * The messages between the host and the sandbox thread (or the in-process
 * host, which takes the same ones). Plain data: they are structured-cloned.
 */
import type { IndexFunctionSource, SandboxLimits } from "../../ports/sandbox.js";

export type SandboxRequest =
  | { readonly type: "create"; readonly id: number; readonly sandbox: number; readonly functions: readonly IndexFunctionSource[]; readonly limits: SandboxLimits }
  | { readonly type: "run"; readonly id: number; readonly sandbox: number; readonly text: string; readonly count: number; readonly batchDeadlineMs: number }
  | { readonly type: "drop"; readonly id: number; readonly sandbox: number };

type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;

/** A request before the transport numbers it. */
export type SandboxRequestBody = WithoutId<SandboxRequest>;

/** The thread's first message: it is up and its engine loaded; the watchdog counts from here. */
export interface SandboxReady {
  readonly ready: true;
}

/** create: refused functions as [index, message]; run: the output chunks. */
export type SandboxReply =
  | { readonly id: number; readonly ok: true; readonly refused?: readonly (readonly [number, string])[]; readonly chunks?: readonly string[] }
  | { readonly id: number; readonly ok: false; readonly error: string };
