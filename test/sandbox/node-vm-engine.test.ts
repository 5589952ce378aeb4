/**
 * The node-vm engine (trusted functions, no limits): what differs from the
 * QuickJS sandbox is where a failure surfaces, so these pin that the batch
 * runner still blames only the guilty document. The shared semantics are in
 * semantics.test.ts, isolation.test.ts and document-writes.test.ts, which
 * run on both engines.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSandboxFactory } from "../../src/adapters/sandbox/index.js";
import type { IndexSandbox } from "../../src/ports/sandbox.js";
import { compilingCleanly, maps } from "../support/sandbox.js";

const open: IndexSandbox[] = [];
afterEach(() => open.splice(0).forEach((sandbox) => sandbox.dispose()));
const compiled = compilingCleanly(createSandboxFactory({ engine: "node-vm" }), open);

describe("sandbox engine node-vm", () => {
  it("V8's stack overflow is an exception of that function on that document", async () => {
    const sandbox = await compiled(maps("function(doc){ function f(){ return f(); } if (doc.n === 2) f(); emit(doc.n, null); }", "function(doc){ emit('b', doc.n); }"));
    const out = await sandbox.run([1, 2, 3].map((n) => ({ _id: `d${n}`, n })));
    expect(out.map((doc) => doc.results[0])).toEqual([
      { ok: true, emits: [[1, null]] },
      { ok: false, kind: "exception", error: expect.stringContaining("RangeError") },
      { ok: true, emits: [[3, null]] },
    ]);
    expect(out.map((doc) => doc.results[1])).toEqual([1, 2, 3].map((n) => ({ ok: true, emits: [["b", n]] })));
  });

  it("a function that throws null fails as memory there (couchjs's reading); the guest is rebuilt and the rest of the batch runs", async () => {
    // The global counts documents seen by this guest: after the rebuild it starts again.
    const sandbox = await compiled(maps("function(doc){ globalThis.seen = (globalThis.seen || 0) + 1; if (doc.n === 2) throw null; emit(doc.n, seen); }"));
    const out = await sandbox.run([1, 2, 3, 4].map((n) => ({ _id: `d${n}`, n })));
    expect(out.map((doc) => doc.results[0])).toEqual([
      { ok: true, emits: [[1, 1]] },
      { ok: false, kind: "memory", error: expect.stringContaining("memory limit") },
      { ok: true, emits: [[3, 1]] },
      { ok: true, emits: [[4, 2]] },
    ]);
  });

  it("a `.then` a function leaves behind never runs, in the batch or after it (as in QuickJS)", async () => {
    const sandbox = await compiled(maps("function(doc){ Promise.resolve().then(function(){ emit('late', doc._id); }); emit(doc._id, 1); }"));
    const out = await sandbox.run([{ _id: "a" }, { _id: "b" }]);
    expect(out.map((doc) => doc.results[0])).toEqual([
      { ok: true, emits: [["a", 1]] },
      { ok: true, emits: [["b", 1]] },
    ]);
    // On the process's own queue the callback ran here, outside any run: its emit threw, and the rejection ended the process.
    await new Promise((resolve) => setImmediate(resolve));
    const [again] = await sandbox.run([{ _id: "c" }]);
    expect(again!.results[0]).toEqual({ ok: true, emits: [["c", 1]] });
  });

  it("runs in this thread: a run settles in microtasks, before the event loop turns", async () => {
    const sandbox = await compiled(maps("function(doc){ emit(doc._id, 1); }"));
    await sandbox.run([{ _id: "warm" }]);
    let turned = false;
    setImmediate(() => (turned = true));
    const [doc] = await sandbox.run([{ _id: "a" }]);
    expect(doc!.results[0]).toEqual({ ok: true, emits: [["a", 1]] });
    expect(turned).toBe(false);
  });
});
