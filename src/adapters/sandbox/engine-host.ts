/**
 * The sandboxes of one thread: each has its own guest (separate limits and
 * globals; with QuickJS a runtime of its own inside one WebAssembly instance
 * per thread).
 *
 * The host keeps every sandbox's sources, so a guest can be rebuilt at any
 * time: after it ran out of memory, or after the engine itself failed (a
 * WebAssembly trap), when the whole engine is loaded again and every guest is
 * rebuilt on next use.
 */
import type { IndexFunctionSource, SandboxLimits } from "../../ports/sandbox.js";
import { runBatch, type GuestSlot } from "./batch-runner.js";
import { compileGuest } from "./compile-functions.js";
import { EngineCrashed, type EngineLoader, type Guest, type GuestMaker } from "./guest.js";
import type { SandboxReply, SandboxRequest } from "./messages.js";
import { failurePart } from "./wire.js";

interface SandboxRecord {
  readonly functions: readonly IndexFunctionSource[];
  readonly limits: SandboxLimits;
  refused: ReadonlyMap<number, string>;
  engine: Guest | undefined;
  /** Its slot and the engine that slot rebuilds guests in: made once per engine, not per batch. */
  slot?: { readonly guests: GuestMaker; readonly slot: GuestSlot };
}

export class EngineHost {
  private guests: GuestMaker | undefined;
  private readonly sandboxes = new Map<number, SandboxRecord>();

  /** @param loadEngine loads the engine (again after it crashed) */
  constructor(private readonly loadEngine: EngineLoader) {}

  /** Loads the engine (QuickJS: its WebAssembly instance) ahead of the first request (it is loaded on demand otherwise). */
  async start(): Promise<void> {
    await this.loadedEngine().catch(() => undefined);
  }

  async handle(request: SandboxRequest): Promise<SandboxReply> {
    try {
      return this.dispatch(request, await this.loadedEngine());
    } catch (error) {
      if (error instanceof EngineCrashed) this.abandonEngine();
      return { id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  }

  private async loadedEngine(): Promise<GuestMaker> {
    this.guests ??= await this.loadEngine();
    return this.guests;
  }

  private dispatch(request: SandboxRequest, guests: GuestMaker): SandboxReply {
    switch (request.type) {
      case "create":
        return { id: request.id, ok: true, refused: [...this.create(request.sandbox, request.functions, request.limits, guests)] };
      case "run":
        return { id: request.id, ok: true, chunks: this.run(request.sandbox, request.text, request.count, request.batchDeadlineMs, guests) };
      case "drop":
        this.drop(request.sandbox);
        return { id: request.id, ok: true };
    }
  }

  private create(sandbox: number, functions: readonly IndexFunctionSource[], limits: SandboxLimits, guests: GuestMaker): ReadonlyMap<number, string> {
    this.drop(sandbox);
    const compiled = compileGuest(() => guests(limits), functions);
    this.sandboxes.set(sandbox, { functions, limits, refused: compiled.refused, engine: compiled.engine });
    return compiled.refused;
  }

  private run(sandbox: number, text: string, count: number, batchDeadlineMs: number, guests: GuestMaker): string[] {
    const record = this.sandboxes.get(sandbox);
    if (record === undefined) throw new Error(`unknown sandbox ${sandbox}`);
    return runBatch(this.slotOf(record, guests), text, count, record.limits, batchDeadlineMs);
  }

  private slotOf(record: SandboxRecord, guests: GuestMaker): GuestSlot {
    if (record.slot?.guests !== guests) record.slot = { guests, slot: this.newSlot(record, guests) };
    return record.slot.slot;
  }

  private newSlot(record: SandboxRecord, guests: GuestMaker): GuestSlot {
    const rebuild = (): Guest => {
      const compiled = compileGuest(() => guests(record.limits), record.functions, record.refused);
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

  /** The engine failed (a trap): nothing in it can be trusted or freed; guests are rebuilt in a new one. */
  private abandonEngine(): void {
    this.guests = undefined;
    for (const record of this.sandboxes.values()) record.engine = undefined;
  }
}
