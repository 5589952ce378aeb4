/**
 * Dispose, and the process around the sandbox: the worker thread must never
 * keep a process alive, disposed or not, and the event loop stays free while
 * a guest is busy.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createSandboxFactory } from "../../src/adapters/sandbox/index.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SANDBOX = new URL("../../src/adapters/sandbox/index.ts", import.meta.url).href;

/** Runs an ES module body in a fresh Node process (through tsx); resolves with its exit code and output once it exits by itself. */
const runInChild = (body: string): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const script = `import { createSandboxFactory } from ${JSON.stringify(SANDBOX)};\n${body}`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });

const ONE_MAP = `[{ name: "m", kind: "map", source: "function(doc){ emit(doc._id, 1); }" }]`;

/** Turns only the microtask queue: work that waits on I/O or a timer cannot settle in here. */
const drainMicrotasks = async (turns: number): Promise<void> => {
  for (let i = 0; i < turns; i++) await Promise.resolve();
};

describe("sandbox: lifecycle", () => {
  // Simulations on a virtual clock replay a seed only if a build settles without the event loop
  // turning (issue #8: the engine's first load, on wall time, shifted the first builds).
  it("in this thread, after ready(), compile and run settle in microtasks alone", async () => {
    const factory = createSandboxFactory({ thread: "main" });
    await factory.ready();
    let emits: unknown;
    void factory
      .compile([{ name: "m", kind: "map", source: "function(doc){ emit(doc._id, 1); }" }])
      .then(async ({ sandbox }) => (emits = (await sandbox.run([{ _id: "a" }]))[0]!.results[0]));
    await drainMicrotasks(1_000);
    expect(emits).toEqual({ ok: true, emits: [["a", 1]] });
  });

  it("dispose is idempotent; run after dispose rejects; other sandboxes of the factory keep working", async () => {
    const factory = createSandboxFactory();
    const first = await factory.compile([{ name: "m", kind: "map", source: "function(doc){ emit(doc._id, 1); }" }]);
    const second = await factory.compile([{ name: "m", kind: "map", source: "function(doc){ emit(doc._id, 2); }" }]);
    const pending = first.sandbox.run([{ _id: "a" }]);
    first.sandbox.dispose();
    first.sandbox.dispose();
    expect((await pending)[0]!.results[0]).toEqual({ ok: true, emits: [["a", 1]] });
    await expect(first.sandbox.run([{ _id: "b" }])).rejects.toThrow("disposed");
    expect((await second.sandbox.run([{ _id: "c" }]))[0]!.results[0]).toEqual({ ok: true, emits: [["c", 2]] });
    second.sandbox.dispose();
  });

  it("a factory whose sandboxes were all disposed starts a new thread for the next compile", async () => {
    const factory = createSandboxFactory();
    const first = await factory.compile([{ name: "m", kind: "map", source: "function(doc){ emit(1, 1); }" }]);
    first.sandbox.dispose();
    const second = await factory.compile([{ name: "m", kind: "map", source: "function(doc){ emit(2, 2); }" }]);
    expect((await second.sandbox.run([{ _id: "x" }]))[0]!.results[0]).toEqual({ ok: true, emits: [[2, 2]] });
    second.sandbox.dispose();
  });

  it("keeps the event loop free while a guest is busy", async () => {
    const factory = createSandboxFactory();
    const { sandbox } = await factory.compile([{ name: "slow", kind: "map", source: "function(doc){ while (true) {} }" }], { timeoutMsPerDoc: 1000 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const [doc] = await sandbox.run([{ _id: "a" }]);
    clearInterval(ticker);
    sandbox.dispose();
    expect(doc!.results[0]).toMatchObject({ ok: false, kind: "timeout" });
    // The guest looped for at least a second; the host's timers kept firing meanwhile.
    expect(ticks).toBeGreaterThan(1);
  });

  it("a thread stuck in native code is terminated by the watchdog: that batch fails, every sandbox of the factory works again", async () => {
    const factory = createSandboxFactory({ watchdogGraceMs: 0 });
    const bystander = await factory.compile([{ name: "m", kind: "map", source: "function(doc){ emit(doc._id, 'bystander'); }" }]);
    // JSON.stringify of a value nested this deep takes seconds and never checks the interrupt handler.
    const stuck = await factory.compile(
      [{ name: "deep", kind: "map", source: "function(doc){ if (doc.deep) { var v = []; for (var i = 0; i < 45000; i++) v = [v]; toJSON(v); } emit(doc._id, 1); }" }],
      { timeoutMsPerDoc: 1000, timeoutMsPerBatch: 1000 },
    );
    const out = await stuck.sandbox.run([{ _id: "a" }, { _id: "b", deep: true }]);
    for (const doc of out) expect(doc.results[0]).toMatchObject({ ok: false, kind: "timeout", error: expect.stringContaining("stopped answering") });
    expect((await stuck.sandbox.run([{ _id: "c" }]))[0]!.results[0]).toEqual({ ok: true, emits: [["c", 1]] });
    expect((await bystander.sandbox.run([{ _id: "d" }]))[0]!.results[0]).toEqual({ ok: true, emits: [["d", "bystander"]] });
    stuck.sandbox.dispose();
    bystander.sandbox.dispose();
  });

  it("a process exits by itself after disposing its sandboxes: no handle is left open", async () => {
    const result = await runInChild(`
      const factory = createSandboxFactory();
      const { sandbox } = await factory.compile(${ONE_MAP});
      const out = await sandbox.run([{ _id: "a" }]);
      sandbox.dispose();
      sandbox.dispose();
      console.log(JSON.stringify(out[0].results[0]));
    `);
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe('{"ok":true,"emits":[["a",1]]}');
    expect(result.code).toBe(0);
  });

  it("a process exits by itself even when it never disposes, and a pending run still keeps it alive until it settles", async () => {
    const result = await runInChild(`
      const factory = createSandboxFactory();
      const { sandbox } = await factory.compile([{ name: "slow", kind: "map", source: "function(doc){ var t = Date.now(); while (Date.now() - t < 300) {} emit(1, 1); }" }]);
      const out = await sandbox.run([{ _id: "a" }]);
      console.log(JSON.stringify(out[0].results[0]));
    `);
    expect(result.stdout.trim()).toBe('{"ok":true,"emits":[[1,1]]}');
    expect(result.code).toBe(0);
  });
});
