/**
 * The trusted guest (guest.ts): the same prelude and batch protocol as the
 * QuickJS guest, in a `node:vm` context of this thread, run by V8.
 *
 * NOT a sandbox. A `node:vm` context has its own globals but shares this
 * process's heap and thread: nothing limits a function's time (vm's own
 * `timeout` starts a watchdog per call, about 95 µs, more than a whole batch
 * of this engine) or memory, and Node says plainly that vm is no security
 * mechanism. Promise rejections are tracked for the whole process: a
 * function that leaves a promise rejected without a handler ends the process
 * as Node ends it for any code (unless the embedder handles
 * `unhandledRejection`).
 *
 * It exists for functions the caller wrote itself, where the sandbox's cost
 * buys nothing: `bench:simulate`'s workload, whose one-line map ran about
 * 17 µs a call in QuickJS and 1.6 µs here.
 *
 * Outputs are the sandbox's: the prelude serializes rows itself and the host
 * decodes the same text (the semantics tests run on both engines).
 */
import vm from "node:vm";
import type { IndexFunctionKind } from "../../ports/sandbox.js";
import { classifyStop, EngineCrashed, type EngineLoader, type Guest, type GuestCall } from "./guest.js";
import { GUEST_PRELUDE } from "./guest-prelude.js";

/** What the prelude evaluates to; every entry takes and returns strings and numbers only. */
interface PreludeEntries {
  compile(index: number, kind: IndexFunctionKind, source: string, readsOnly: 0 | 1): unknown;
  refuse(index: number, kind: IndexFunctionKind, message: string): unknown;
  load(text: string): unknown;
  loadRun(text: string): unknown;
  run(fromDoc: number, fromFunction: number, carry: string, overrides: string): unknown;
  progress(): unknown;
}

export class NodeVmGuest implements Guest {
  private readonly entries: PreludeEntries;
  private disposed = false;

  constructor() {
    try {
      // A context of its own: a function that replaces a global changes only this design doc's.
      // Its own microtask queue too, which calls from the host never drain: a `.then` a function
      // leaves behind never runs (as in QuickJS, whose pending jobs the host never runs). On the
      // shared queue it ran after the batch, where its emit threw and the rejection ended the process.
      const context = vm.createContext({}, { microtaskMode: "afterEvaluate" });
      this.entries = vm.runInContext(GUEST_PRELUDE, context, { filename: "prelude.js" }) as PreludeEntries;
    } catch (error) {
      throw new EngineCrashed(`the prelude failed to load: ${String(error)}`);
    }
  }

  compile(index: number, kind: IndexFunctionKind, source: string, readsOnly: boolean): GuestCall<string> {
    return this.call(() => this.entries.compile(index, kind, source, readsOnly ? 1 : 0));
  }

  refuse(index: number, kind: IndexFunctionKind, message: string): GuestCall<string> {
    return this.call(() => this.entries.refuse(index, kind, message));
  }

  /** Deadlines are not enforced here (see above). */
  load(batchText: string, _deadlineMs: number): GuestCall<string> {
    return this.call(() => this.entries.load(batchText));
  }

  loadRun(batchText: string, _deadlineMs: number): GuestCall<string> {
    return this.call(() => this.entries.loadRun(batchText));
  }

  run(fromDoc: number, fromFunction: number, carry: string, overrides: string, _deadlineMs: number): GuestCall<string> {
    return this.call(() => this.entries.run(fromDoc, fromFunction, carry, overrides));
  }

  progress(): GuestCall<string> {
    return this.call(() => this.entries.progress());
  }

  /** The context is garbage once nothing refers to it. */
  dispose(): void {
    this.disposed = true;
  }

  private call(entry: () => unknown): GuestCall<string> {
    if (this.disposed) throw new EngineCrashed("the guest was disposed");
    try {
      // Every entry returns a string but load (a count), as in QuickJS.
      return { ok: true, value: String(entry()) };
    } catch (thrown) {
      // What escaped the prelude's own catch: its out-of-memory marker (a function that threw null), or a broken prelude.
      return classifyStop(thrown);
    }
  }
}

/** Trusted guests in this thread; loading is instant and nothing is shared between guests but the thread. */
export const nodeVmGuests: EngineLoader = () => Promise.resolve(() => new NodeVmGuest());
