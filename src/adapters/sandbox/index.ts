/**
 * The sandbox adapter: design-document JavaScript (CouchDB map functions,
 * hastings st_index functions) in QuickJS compiled to WebAssembly
 * (quickjs-emscripten-core + @jitl/quickjs-wasmfile-release-sync), one QuickJS
 * runtime per design doc (own heap, limits, globals), in a worker thread.
 *
 * Why QuickJS and not isolated-vm (V8 isolates). Measured on this 2-core
 * machine, Node 20.20.2, while other jobs kept its load average at 6-9, so
 * the figures that do not depend on that load are per CPU-second of this
 * process (all threads): what one quiet core does.
 *
 *   `npm run bench:index-build` (100,000 docs of ~310 bytes, best of 3):
 *     two maps: unsandboxed 207,000 docs/CPU-s (123,000 docs/s on the wall
 *       clock under that load); sandbox in its worker 65,700 docs/CPU-s
 *       (48,600 to 55,300 docs/s wall, 4.8-5.4x CouchDB 3.4.3's 10,200);
 *       sandbox in the main thread 68,000 docs/CPU-s: the worker thread costs
 *       ~3% more CPU and keeps the event loop free during the build
 *     st_index: unsandboxed 263,000 docs/CPU-s; sandbox 66,200 docs/CPU-s
 *   The same guest (this prelude), same batches, in-process, both engines,
 *   wall clock under that load:
 *     QuickJS 41,600 (maps) / 55,000 (st_index) docs/s;
 *     isolated-vm 5.0.4: 373,000 / 384,000 docs/s.
 *
 * isolated-vm is ~9x faster in the guest, but: its current release (7.0.1)
 * needs Node >= 24 and does not compile on Node 20; 5.0.4, the last for Node
 * 20, has no binary we can fetch here, so every `npm install` compiles it with
 * node-gyp (about 2 minutes; a C++ toolchain and Node headers on every
 * machine); and on Node 20 every process that loads it, the daemon, each test
 * worker and every embedder of this library, must run with
 * `--no-node-snapshot`. QuickJS meets both targets (>= 51,000 docs/s for the
 * maps, >= 20,000 for st_index) with a plain `npm install`, no build, no
 * flags, and keeps user code behind a WebAssembly boundary with no JIT. If
 * builds ever need more, isolated-vm is the next step (it fits the same
 * guest prelude and batch protocol).
 *
 * The limits are QuickJS's own: an interrupt handler for time ("interrupted"
 * cannot be caught by user code), a malloc limit per runtime for memory, a
 * stack limit. QuickJS interrupts a whole call, not one function, so a
 * function that runs away is stopped after one to two times its limit (see
 * batch-runner.ts); some native work (JSON.stringify of a value nested tens of
 * thousands deep) cannot be interrupted at all, which the worker's watchdog
 * bounds. Semantics follow couchjs (share/server/views.js): a function's
 * emits count only if it returns; globals emit, log, toJSON, sum, isArray,
 * and st_index for st_index functions; no require. Each function sees the
 * document as stored: couchjs freezes it (a write is silently dropped); here
 * a function that may write gets its own copy (its write is visible to
 * itself only), and functions that only read share one (document-writes.ts).
 */
import type { IndexFunctionSource, SandboxFactory, SandboxLimits } from "../../ports/sandbox.js";
import { InProcessTransport } from "./in-process-transport.js";
import { nodeVmGuests } from "./node-vm-engine.js";
import { quickJsGuests } from "./quickjs-engine.js";
import { HostedIndexSandbox } from "./index-sandbox.js";
import { resolveLimits } from "./limits.js";
import { DEFAULT_WATCHDOG_GRACE_MS, type SandboxTransport } from "./transport.js";
import { WorkerTransport } from "./worker-transport.js";

export { DEFAULT_SANDBOX_LIMITS, resolveLimits } from "./limits.js";

export interface SandboxFactoryOptions {
  /**
   * "worker" (default): every sandbox of this factory runs in one worker
   * thread, started on demand and ended when the last sandbox is disposed;
   * the event loop stays free during a build.
   * "main": in this thread; a batch blocks the event loop while it runs, and
   * deep recursion in a function fails sooner (smaller guest stack).
   */
  readonly thread?: "worker" | "main";
  /**
   * "quickjs" (default): the sandbox described above.
   * "node-vm": NOT a sandbox, for functions you wrote yourself: the same
   * prelude in a `node:vm` context of this thread (`thread` is ignored), run
   * by V8 about ten times faster per call, with no time or memory limit
   * (a function that loops stops this thread). bench:simulate runs its own
   * workload's map functions with it.
   */
  readonly engine?: "quickjs" | "node-vm";
  /** Defaults for every compile(); a compile's own limits win. */
  readonly limits?: Partial<SandboxLimits>;
  /**
   * Worker only: how long past a batch's time limits a silent thread is given
   * before it is terminated (its batch fails as timeout, the thread restarts).
   * The guest's own deadlines fire first unless it is stuck in native code.
   */
  readonly watchdogGraceMs?: number;
}

// The guest's stack lives on the thread's native stack (WebAssembly frames):
// QuickJS must hit its own limit (a catchable "stack overflow") well before V8
// hits the thread's, which would be a trap. Measured: 1 MiB of guest stack
// needs under 16 MiB of thread stack; the main thread has about 1 MiB in all.
const WORKER_GUEST_STACK_BYTES = 1024 * 1024;
const WORKER_THREAD_STACK_MB = 32;
const MAIN_GUEST_STACK_BYTES = 128 * 1024;

const KINDS = new Set(["map", "st_index"]);

/** Plain data only: the functions cross a thread boundary. */
const normalized = (fn: IndexFunctionSource): IndexFunctionSource => ({
  name: String(fn.name),
  kind: KINDS.has(fn.kind) ? fn.kind : "map",
  source: typeof fn.source === "string" ? fn.source : "",
});

export interface LocalSandboxFactory extends SandboxFactory {
  /**
   * Resolves once the engine is loaded ("main", "node-vm"; at once for "worker", whose
   * timing is the thread's anyway). The first load is file I/O and WebAssembly
   * compilation: on a virtual clock, await this before time starts, or the
   * first builds wait for a number of virtual ms that depends on the machine's
   * load, and a seed does not replay the same. Afterwards a "main" sandbox
   * settles in microtasks alone.
   */
  ready(): Promise<void>;
}

export const createSandboxFactory = (options: SandboxFactoryOptions = {}): LocalSandboxFactory => {
  let transport: SandboxTransport | undefined;
  let inProcess: InProcessTransport | undefined;
  const inThisThread = options.thread === "main" || options.engine === "node-vm";
  const transportFor = (): SandboxTransport =>
    (transport ??=
      inThisThread
        ? (inProcess = new InProcessTransport(options.engine === "node-vm" ? nodeVmGuests : quickJsGuests(MAIN_GUEST_STACK_BYTES)))
        : new WorkerTransport(
            { stackBytes: WORKER_GUEST_STACK_BYTES, threadStackMb: WORKER_THREAD_STACK_MB },
            Number.isFinite(options.watchdogGraceMs) ? Math.max(0, options.watchdogGraceMs!) : DEFAULT_WATCHDOG_GRACE_MS,
          ));
  return {
    async ready() {
      if (inThisThread) {
        transportFor();
        await inProcess?.ready();
      }
    },
    async compile(functions, limits) {
      const resolved = resolveLimits({ ...options.limits, ...limits });
      const sources = functions.map(normalized);
      const { handle, refused } = await transportFor().create(sources, resolved);
      const errors = [...refused.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, error]) => ({ name: sources[index]?.name ?? String(index), error }));
      const sandbox = new HostedIndexSandbox(transportFor(), handle, sources.map((fn) => fn.kind), resolved);
      return { sandbox, errors };
    },
  };
};
