/**
 * Guests in this thread. A batch then blocks the event loop while it runs
 * (up to its deadlines), and the guest's stack must stay small enough for
 * this thread's native stack. For measuring the worker's cost, and for hosts
 * that cannot start worker threads.
 */
import type { IndexFunctionSource, SandboxLimits } from "../../ports/sandbox.js";
import { EngineHost } from "./engine-host.js";
import type { EngineLoader } from "./guest.js";
import { refusedFrom, type SandboxTransport } from "./transport.js";
import type { SandboxReply, SandboxRequest } from "./messages.js";

export class InProcessTransport implements SandboxTransport {
  private readonly host: EngineHost;
  private queue: Promise<unknown> = Promise.resolve();
  private nextHandle = 1;

  constructor(loadEngine: EngineLoader) {
    this.host = new EngineHost(loadEngine);
  }

  /** Loads the engine now: later requests then settle without waiting on I/O. */
  ready(): Promise<void> {
    return this.host.start();
  }

  async create(functions: readonly IndexFunctionSource[], limits: SandboxLimits): Promise<{ handle: number; refused: ReadonlyMap<number, string> }> {
    const handle = this.nextHandle++;
    const reply = await this.send({ type: "create", id: 0, sandbox: handle, functions, limits });
    if (!reply.ok) return { handle, refused: new Map(functions.map((_, index) => [index, `the sandbox could not compile: ${reply.error}`])) };
    return { handle, refused: refusedFrom(reply.refused) };
  }

  async run(handle: number, text: string, count: number, _limits: SandboxLimits, batchDeadlineMs: number): Promise<readonly string[]> {
    const reply = await this.send({ type: "run", id: 0, sandbox: handle, text, count, batchDeadlineMs });
    if (!reply.ok) throw new Error(reply.error);
    return reply.chunks ?? [];
  }

  drop(handle: number): void {
    this.send({ type: "drop", id: 0, sandbox: handle }).catch(() => undefined);
  }

  /** One request at a time, in order, as in the worker. Made with its id (0): a spread to add it was a hundredth of bench:simulate. */
  private send(request: SandboxRequest): Promise<SandboxReply> {
    const reply = this.queue.then(() => this.host.handle(request));
    this.queue = reply.catch(() => undefined);
    return reply;
  }
}
