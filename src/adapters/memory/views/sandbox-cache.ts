/**
 * Compiled sandboxes of the store's view groups, reused across updates (a
 * compile costs a context and every function's evaluation) and shared by
 * the dbs whose design docs define the same views. Bounded: beyond
 * `capacity` the least recently used idle one is disposed (a busy one never
 * is; the cache then holds more until it is released).
 *
 * The store's own default factory (created when none was injected) runs its
 * sandboxes in one worker thread, which ends with the last sandbox: `close`
 * disposes them all.
 */
import type { CompileError, IndexFunctionSource, IndexSandbox, SandboxFactory, SandboxLimits } from "../../../ports/sandbox.js";

export interface CompiledSandbox {
  readonly sandbox: IndexSandbox;
  /** Functions that did not compile, by index into the functions given. */
  readonly errors: ReadonlyMap<number, string>;
}

interface Entry {
  readonly compiled: Promise<CompiledSandbox>;
  users: number;
  lastUsed: number;
}

export class SandboxCache {
  private readonly entries = new Map<string, Entry>();
  private clock = 0;
  private closed = false;

  constructor(
    private readonly factory: () => SandboxFactory,
    private readonly limits: Partial<SandboxLimits> | undefined,
    private readonly capacity: number,
  ) {}

  /**
   * A compiled sandbox for these functions (compiled once per `key`); `release` it when done.
   * `functions` may be a function that lists them: called only when `key` is not compiled yet.
   */
  async acquire(key: string, functions: readonly IndexFunctionSource[] | (() => readonly IndexFunctionSource[])): Promise<CompiledSandbox> {
    if (this.closed) throw new Error("the store was closed");
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { compiled: this.compile(typeof functions === "function" ? functions() : functions), users: 0, lastUsed: 0 };
      this.entries.set(key, entry);
    }
    entry.users++;
    entry.lastUsed = ++this.clock;
    this.evictIdle();
    try {
      return await entry.compiled;
    } catch (error) {
      entry.users--;
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw error;
    }
  }

  release(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    entry.users = Math.max(0, entry.users - 1);
    this.evictIdle();
  }

  /** Dispose every sandbox; later `acquire`s fail. */
  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) void entry.compiled.then((compiled) => compiled.sandbox.dispose(), () => undefined);
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private async compile(functions: readonly IndexFunctionSource[]): Promise<CompiledSandbox> {
    const { sandbox, errors } = await this.factory().compile(functions, this.limits);
    return { sandbox, errors: errorsByIndex(functions, errors) };
  }

  private evictIdle(): void {
    while (this.entries.size > this.capacity) {
      let oldest: [string, Entry] | undefined;
      for (const candidate of this.entries) {
        if (candidate[1].users === 0 && (oldest === undefined || candidate[1].lastUsed < oldest[1].lastUsed)) oldest = candidate;
      }
      if (oldest === undefined) return;
      this.entries.delete(oldest[0]);
      void oldest[1].compiled.then((compiled) => compiled.sandbox.dispose(), () => undefined);
    }
  }
}

/** The factory reports errors by function name; names are unique here (index-prefixed). */
const errorsByIndex = (functions: readonly IndexFunctionSource[], errors: readonly CompileError[]): Map<number, string> => {
  const byName = new Map(functions.map((fn, index) => [fn.name, index]));
  const out = new Map<number, string>();
  for (const error of errors) {
    const index = byName.get(error.name);
    if (index !== undefined) out.set(index, error.error);
  }
  return out;
};
