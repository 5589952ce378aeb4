/**
 * The sandboxes of one thread: each has its own QuickJS runtime (separate
 * heap, limits and globals) inside one WebAssembly instance per thread.
 *
 * The host keeps every sandbox's sources, so a guest can be rebuilt at any
 * time: after it ran out of memory, or after the instance itself trapped, when
 * the whole instance is replaced and every guest is rebuilt on next use.
 */
import type { QuickJSWASMModule } from "quickjs-emscripten-core";
import type { IndexFunctionSource, SandboxLimits } from "../../ports/sandbox.js";
import { runBatch, type GuestSlot } from "./batch-runner.js";
import { compileGuest } from "./compile-functions.js";
import { EngineCrashed, type GuestEngine } from "./quickjs-engine.js";
import type { SandboxReply, SandboxRequest } from "./messages.js";
import { loadQuickJSModule } from "./wasm-module.js";
import { failurePart } from "./wire.js";

interface SandboxRecord {
  readonly functions: readonly IndexFunctionSource[];
  readonly limits: SandboxLimits;
  refused: ReadonlyMap<number, string>;
  engine: GuestEngine | undefined;
  /** Its slot and the instance that slot rebuilds guests in: made once per instance, not per batch. */
  slot?: { readonly module: QuickJSWASMModule; readonly slot: GuestSlot };
}

export class EngineHost {
  private module: QuickJSWASMModule | undefined;
  private readonly sandboxes = new Map<number, SandboxRecord>();

  /** @param stackBytes the guest's stack limit; it must fit in this thread's native stack. */
  constructor(private readonly stackBytes: number) {}

  /** Loads the WebAssembly instance ahead of the first request (it is loaded on demand otherwise). */
  async start(): Promise<void> {
    await this.loadedModule().catch(() => undefined);
  }

  async handle(request: SandboxRequest): Promise<SandboxReply> {
    try {
      return this.dispatch(request, await this.loadedModule());
    } catch (error) {
      if (error instanceof EngineCrashed) this.abandonModule();
      return { id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  }

  private async loadedModule(): Promise<QuickJSWASMModule> {
    this.module ??= await loadQuickJSModule();
    return this.module;
  }

  private dispatch(request: SandboxRequest, module: QuickJSWASMModule): SandboxReply {
    switch (request.type) {
      case "create":
        return { id: request.id, ok: true, refused: [...this.create(request.sandbox, request.functions, request.limits, module)] };
      case "run":
        return { id: request.id, ok: true, chunks: this.run(request.sandbox, request.text, request.count, request.batchDeadlineMs, module) };
      case "drop":
        this.drop(request.sandbox);
        return { id: request.id, ok: true };
    }
  }

  private create(sandbox: number, functions: readonly IndexFunctionSource[], limits: SandboxLimits, module: QuickJSWASMModule): ReadonlyMap<number, string> {
    this.drop(sandbox);
    const compiled = compileGuest(module, functions, limits, this.stackBytes);
    this.sandboxes.set(sandbox, { functions, limits, refused: compiled.refused, engine: compiled.engine });
    return compiled.refused;
  }

  private run(sandbox: number, text: string, count: number, batchDeadlineMs: number, module: QuickJSWASMModule): string[] {
    const record = this.sandboxes.get(sandbox);
    if (record === undefined) throw new Error(`unknown sandbox ${sandbox}`);
    return runBatch(this.slotOf(record, module), text, count, record.limits, batchDeadlineMs);
  }

  private slotOf(record: SandboxRecord, module: QuickJSWASMModule): GuestSlot {
    if (record.slot?.module !== module) record.slot = { module, slot: this.newSlot(record, module) };
    return record.slot.slot;
  }

  private newSlot(record: SandboxRecord, module: QuickJSWASMModule): GuestSlot {
    const rebuild = (): GuestEngine => {
      const compiled = compileGuest(module, record.functions, record.limits, this.stackBytes, record.refused);
      record.refused = compiled.refused;
      return compiled.engine;
    };
    return {
      engine: () => (record.engine ??= rebuild()),
      discard: () => {
        record.engine?.dispose();
        record.engine = undefined;
      },
      functionCount: record.functions.length,
      get compileParts() {
        return new Map([...record.refused].map(([index, message]) => [index, failurePart("compile", message)]));
      },
    };
  }

  private drop(sandbox: number): void {
    const engine = this.sandboxes.get(sandbox)?.engine;
    this.sandboxes.delete(sandbox);
    engine?.dispose();
  }

  /** The instance trapped: nothing in it can be trusted or freed; guests are rebuilt in a new one. */
  private abandonModule(): void {
    this.module = undefined;
    for (const record of this.sandboxes.values()) record.engine = undefined;
  }
}
