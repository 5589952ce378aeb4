/**
 * The host side of the sandbox thread: spawns it on demand, matches replies
 * to requests, and notices when it dies or stops answering.
 *
 * - The thread keeps the process alive only while a request is pending
 *   (ref/unref), so an idle or forgotten sandbox never holds the process open.
 * - Requests are answered in order, so the oldest pending one is the one
 *   running: a watchdog gives it its batch time plus a grace period, then
 *   terminates the thread (a guest's own deadlines should always fire first).
 *   Until the thread says it is ready, a start-up allowance applies instead.
 * - When the thread dies, the running request fails with the reason; the ones
 *   queued behind it fail as `restarted`, which callers retry on a new thread.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { SandboxReady, SandboxReply, SandboxRequestBody } from "./messages.js";

export type WorkerFailureKind = "crashed" | "unresponsive" | "restarted";

export class WorkerFailure extends Error {
  override readonly name = "WorkerFailure";
  constructor(
    message: string,
    readonly kind: WorkerFailureKind,
    /** The thread ran out of its own heap (not the guest's, which is caught inside). */
    readonly outOfMemory = false,
  ) {
    super(message);
  }
}

interface Pending {
  readonly watchdogMs: number;
  readonly resolve: (reply: SandboxReply) => void;
  readonly reject: (failure: WorkerFailure) => void;
}

/** For a new thread to load its engine (through tsx from the sources, on a busy machine). */
const STARTUP_TIMEOUT_MS = 60_000;

export interface WorkerThreadOptions {
  readonly stackBytes: number;
  readonly threadStackMb: number;
}

export class WorkerClient {
  private worker: Worker | undefined;
  private spawned = 0;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private watchdog: NodeJS.Timeout | undefined;
  private closeWhenIdle = false;
  private ready = false;

  constructor(private readonly options: WorkerThreadOptions) {}

  /** Starts the thread if needed. Changes whenever a new thread starts: guests created on an older one are gone. */
  generation(): number {
    this.ensureWorker();
    return this.spawned;
  }

  /** The running thread's generation, without starting one. */
  liveGeneration(): number | undefined {
    return this.worker === undefined ? undefined : this.spawned;
  }

  request(body: SandboxRequestBody, watchdogMs: number): Promise<SandboxReply> {
    const worker = this.ensureWorker();
    this.closeWhenIdle = false;
    const id = this.nextId++;
    return new Promise<SandboxReply>((resolve, reject) => {
      this.pending.set(id, { watchdogMs, resolve, reject });
      if (this.pending.size === 1) {
        worker.ref();
        this.armWatchdog();
      }
      worker.postMessage({ ...body, id });
    });
  }

  /** Fire and forget; nothing to do if the thread is gone (and its guests with it). */
  post(body: SandboxRequestBody): void {
    this.worker?.postMessage({ ...body, id: 0 });
  }

  /** Ends the thread once nothing is pending (now, if nothing is). */
  close(): void {
    this.closeWhenIdle = true;
    if (this.pending.size === 0) this.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = spawnSandboxThread(this.options);
    this.spawned++;
    this.ready = false;
    let failure: WorkerFailure | undefined;
    worker.on("message", (message: SandboxReply | SandboxReady) => ("ready" in message ? this.started() : this.settle(message)));
    worker.on("error", (error: Error) => {
      const outOfMemory = (error as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY";
      failure ??= new WorkerFailure(`the sandbox thread failed: ${error.message}`, "crashed", outOfMemory);
    });
    worker.on("exit", (code) => this.exited(worker, failure ?? new WorkerFailure(`the sandbox thread exited with code ${code}`, "crashed")));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private started(): void {
    this.ready = true;
    this.armWatchdog();
  }

  private settle(reply: SandboxReply): void {
    const entry = this.pending.get(reply.id);
    if (entry === undefined) return;
    this.pending.delete(reply.id);
    this.armWatchdog();
    if (this.pending.size === 0) this.idle();
    entry.resolve(reply);
  }

  private idle(): void {
    this.worker?.unref();
    if (this.closeWhenIdle) this.terminate();
  }

  private armWatchdog(): void {
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    const head = this.pending.values().next();
    if (head.done === true) return;
    const watchdogMs = this.ready ? head.value.watchdogMs : STARTUP_TIMEOUT_MS;
    const failure = this.ready
      ? new WorkerFailure(`the sandbox thread stopped answering for ${watchdogMs} ms and was terminated`, "unresponsive")
      : new WorkerFailure(`the sandbox thread did not start within ${watchdogMs} ms`, "crashed");
    this.watchdog = setTimeout(() => this.terminate(failure), watchdogMs);
    this.watchdog.unref();
  }

  /** Detaches at once, so a request made while the old thread winds down goes to a new one. */
  private terminate(reason?: WorkerFailure): void {
    const worker = this.worker;
    this.worker = undefined;
    this.failPending(reason ?? new WorkerFailure("the sandbox thread was closed", "crashed"));
    worker?.terminate().catch(() => undefined);
  }

  private exited(worker: Worker, reason: WorkerFailure): void {
    if (worker !== this.worker) return;
    this.worker = undefined;
    this.failPending(reason);
  }

  private failPending(reason: WorkerFailure): void {
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    waiting.forEach((entry, index) =>
      entry.reject(index === 0 ? reason : new WorkerFailure("the sandbox thread restarted before this batch ran", "restarted")),
    );
  }
}

/**
 * The thread runs the compiled entry; from the TypeScript sources (tests,
 * benchmarks) it registers tsx first (tsx's --import does not reach workers).
 */
const spawnSandboxThread = (options: WorkerThreadOptions): Worker => {
  const workerOptions = { execArgv: [], workerData: { stackBytes: options.stackBytes }, resourceLimits: { stackSizeMb: options.threadStackMb } };
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./sandbox-worker.js", import.meta.url), workerOptions);
  const tsxPackage = createRequire(import.meta.url).resolve("tsx/package.json");
  const tsxApi = pathToFileURL(join(dirname(tsxPackage), "dist", "esm", "api", "index.mjs")).href;
  const entry = new URL("./sandbox-worker.ts", import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { ...workerOptions, eval: true });
};
