/**
 * Guests in one worker thread per factory. The transport keeps every
 * sandbox's sources: when the thread is replaced (it crashed, or it was ended
 * when idle), a sandbox is re-created in the new one before its next batch.
 */
import type { IndexFunctionSource, SandboxLimits } from "../../ports/sandbox.js";
import { refusedFrom, type SandboxTransport } from "./transport.js";
import { WorkerClient, WorkerFailure, type WorkerThreadOptions } from "./worker-client.js";
import type { SandboxReply } from "./messages.js";

interface Registered {
  readonly functions: readonly IndexFunctionSource[];
  readonly limits: SandboxLimits;
  /** The thread generation the guest lives in, if any. */
  generation: number | undefined;
}

export class WorkerTransport implements SandboxTransport {
  private readonly client: WorkerClient;
  private readonly sandboxes = new Map<number, Registered>();
  private nextHandle = 1;

  /** @param watchdogGraceMs beyond a request's own time limits, before its silent thread is terminated */
  constructor(
    options: WorkerThreadOptions,
    private readonly watchdogGraceMs: number,
  ) {
    this.client = new WorkerClient(options);
  }

  async create(functions: readonly IndexFunctionSource[], limits: SandboxLimits): Promise<{ handle: number; refused: ReadonlyMap<number, string> }> {
    const handle = this.nextHandle++;
    const registered: Registered = { functions, limits, generation: undefined };
    this.sandboxes.set(handle, registered);
    try {
      const reply = await this.createGuest(handle, registered);
      if (!reply.ok) throw new Error(reply.error);
      return { handle, refused: refusedFrom(reply.refused) };
    } catch (error) {
      // The guest will be created again before the first batch; say why it failed now.
      const message = `the sandbox could not compile: ${error instanceof Error ? error.message : String(error)}`;
      return { handle, refused: new Map(functions.map((_, index) => [index, message])) };
    }
  }

  async run(handle: number, text: string, count: number, limits: SandboxLimits, batchDeadlineMs: number): Promise<readonly string[]> {
    // One retry: a batch queued behind another sandbox's crash deserves a run of its own.
    for (let attempt = 0; ; attempt++) {
      const registered = this.sandboxes.get(handle);
      if (registered === undefined) throw new Error("the sandbox was disposed");
      if (registered.generation !== this.client.generation()) this.createGuest(handle, registered).catch(() => undefined);
      const watchdogMs = Math.max(0, batchDeadlineMs - Date.now()) + limits.timeoutMsPerDoc + this.watchdogGraceMs;
      try {
        const reply = await this.client.request({ type: "run", sandbox: handle, text, count, batchDeadlineMs }, watchdogMs);
        if (!reply.ok) throw new Error(reply.error);
        return reply.chunks ?? [];
      } catch (error) {
        if (error instanceof WorkerFailure && error.kind === "restarted" && attempt === 0) continue;
        throw error;
      }
    }
  }

  drop(handle: number): void {
    const registered = this.sandboxes.get(handle);
    if (registered === undefined) return;
    this.sandboxes.delete(handle);
    if (registered.generation !== undefined && registered.generation === this.client.liveGeneration()) this.client.post({ type: "drop", sandbox: handle });
    if (this.sandboxes.size === 0) this.client.close();
  }

  /** Sent ahead of the batches that need it: the thread answers in order. */
  private createGuest(handle: number, registered: Registered): Promise<SandboxReply> {
    registered.generation = this.client.generation();
    const watchdogMs = (registered.functions.length + 1) * registered.limits.timeoutMsPerDoc + this.watchdogGraceMs;
    const request = this.client.request({ type: "create", sandbox: handle, functions: registered.functions, limits: registered.limits }, watchdogMs);
    return request.then(
      (reply) => {
        if (!reply.ok) registered.generation = undefined;
        return reply;
      },
      (error: unknown) => {
        registered.generation = undefined;
        throw error;
      },
    );
  }
}
