/**
 * Time, memory and stack limits: checked by outcome, never by timing. The
 * limits are generous so that a busy machine cannot turn a pass into a fail;
 * a loop is `timeout` whatever the machine's speed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSandboxFactory } from "../../src/adapters/sandbox/index.js";
import type { FunctionOutcome, IndexSandbox } from "../../src/ports/sandbox.js";
import { compilingInto, emitsOf, maps } from "../support/sandbox.js";

const factory = createSandboxFactory();
const open: IndexSandbox[] = [];
afterEach(() => open.splice(0).forEach((sandbox) => sandbox.dispose()));

const compiled = compilingInto(factory, open);

const docs = (count: number) => Array.from({ length: count }, (_, n) => ({ _id: `d${n}`, n }));

// Allocates live objects until the heap limit stops it (strings would be ropes: cheap).
const HOG = "var hoard = []; while (true) hoard.push({ n: hoard.length, list: [hoard.length, hoard.length] });";

describe("sandbox: limits", () => {
  it("a function that loops forever times out on that document only; the rest of the batch and later batches work", async () => {
    const { sandbox } = await compiled(
      maps(`function(doc){ if (doc.n === 2) { while (true) {} } emit(doc.n, 'a'); }`, "function(doc){ emit(doc.n, 'b'); }"),
      { timeoutMsPerDoc: 1000 },
    );
    const out = await sandbox.run(docs(5));
    expect(out[2]!.results[0]).toMatchObject({ ok: false, kind: "timeout" });
    expect(emitsOf(out[2]!.results[1])).toEqual([[2, "b"]]);
    for (const n of [0, 1, 3, 4]) {
      expect(emitsOf(out[n]!.results[0])).toEqual([[n, "a"]]);
      expect(emitsOf(out[n]!.results[1])).toEqual([[n, "b"]]);
    }
    const later = await sandbox.run([{ _id: "later", n: 7 }]);
    expect(emitsOf(later[0]!.results[0])).toEqual([[7, "a"]]);
  });

  it("a loop cannot be caught by the function itself, and its logs before the loop are kept", async () => {
    const { sandbox } = await compiled(maps(`function(doc){ log('start ' + doc._id); try { while (true) {} } catch (e) { emit('caught', String(e)); } }`), {
      timeoutMsPerDoc: 500,
    });
    const [doc] = await sandbox.run(docs(1));
    expect(doc!.results[0]).toMatchObject({ ok: false, kind: "timeout" });
    expect(doc!.logs).toEqual(["start d0"]);
  });

  it("a function that allocates without bound fails as memory on that document; the sandbox recovers", async () => {
    const { sandbox } = await compiled(maps(`function(doc){ if (doc.n === 1) { ${HOG} } emit(doc.n, null); }`, "function(doc){ emit('other', doc.n); }"), {
      memoryBytes: 16 * 1024 * 1024,
      timeoutMsPerDoc: 60_000,
    });
    const out = await sandbox.run(docs(4));
    expect(out[1]!.results[0]).toMatchObject({ ok: false, kind: "memory" });
    expect(emitsOf(out[1]!.results[1])).toEqual([["other", 1]]);
    for (const n of [0, 2, 3]) expect(emitsOf(out[n]!.results[0])).toEqual([[n, null]]);
    const later = await sandbox.run([{ _id: "later", n: 9 }]);
    expect(emitsOf(later[0]!.results[0])).toEqual([[9, null]]);
  });

  it("memory a function keeps in a global is gone once it hits the limit: later documents are not blamed for it", async () => {
    const { sandbox } = await compiled(maps("function(doc){ globalThis.kept = globalThis.kept || []; for (var i = 0; i < 50000; i++) kept.push({ n: doc.n, i: i }); emit(doc.n, kept.length); }"), {
      memoryBytes: 16 * 1024 * 1024,
      timeoutMsPerDoc: 60_000,
    });
    const out = await sandbox.run(docs(20));
    const kinds = out.map((doc) => (doc.results[0]!.ok ? "ok" : doc.results[0]!.kind));
    expect(kinds).toContain("memory");
    // After each memory failure the guest is rebuilt empty, so the next documents succeed again.
    const firstFailure = kinds.indexOf("memory");
    expect(kinds[firstFailure + 1]).toBe("ok");
    expect(emitsOf(out[firstFailure + 1]!.results[0])[0]![1]).toBe(50000);
  });

  it("deep recursion is an exception of that function, not a crash; deep values are fine", async () => {
    const { sandbox } = await compiled(
      maps(
        "function(doc){ function down(n){ return down(n + 1) + 1; } down(0); }",
        "function(doc){ var v = []; for (var i = 0; i < 2000; i++) v = [v]; emit('deep', toJSON(v).length); }",
        "function(doc){ emit(doc._id, null); }",
      ),
      {},
    );
    const [doc] = await sandbox.run(docs(1));
    expect(doc!.results[0]).toMatchObject({ ok: false, kind: "exception", error: expect.stringContaining("stack overflow") });
    expect(emitsOf(doc!.results[1])).toEqual([["deep", 4002]]);
    expect(emitsOf(doc!.results[2])).toEqual([["d0", null]]);
  });

  it("when the batch runs out of time, what is left of it is timeout", async () => {
    const { sandbox } = await compiled(maps("function(doc){ if (doc.n >= 1) { while (true) {} } emit(doc.n, null); }"), {
      timeoutMsPerDoc: 600,
      timeoutMsPerBatch: 1500,
    });
    const out = await sandbox.run(docs(50));
    expect(emitsOf(out[0]!.results[0])).toEqual([[0, null]]);
    expect(out.slice(1).every((doc) => !doc.results[0]!.ok && doc.results[0]!.kind === "timeout")).toBe(true);
    expect(out.slice(1).some((doc) => !doc.results[0]!.ok && doc.results[0]!.error.includes("batch"))).toBe(true);
  });

  it("a document too big to load under the memory limit fails as memory (a batch loads and runs in one call); the next batch works", async () => {
    const { sandbox } = await compiled(maps("function(doc){ emit(doc.n, doc.big.length); }"), { memoryBytes: 4 * 1024 * 1024 });
    const [big, small] = await sandbox.run([
      { _id: "big", n: 1, big: "x".repeat(5_000_000) },
      { _id: "small", n: 2, big: "y" },
    ]);
    expect(big!.results[0]).toMatchObject({ ok: false, kind: "memory", error: expect.stringContaining("does not fit") });
    expect(emitsOf(small!.results[0])).toEqual([[2, 1]]);
    const [later] = await sandbox.run([{ _id: "later", n: 3, big: "zz" }]);
    expect(emitsOf(later!.results[0])).toEqual([[3, 2]]);
  });

  it("a source that loops or exhausts memory while being evaluated is a compile error", async () => {
    const { sandbox, errors } = await compiled(
      [
        { name: "loops", kind: "map", source: "(function(){ while (true) {} })()" },
        { name: "hogs", kind: "map", source: `(function(){ ${HOG} })()` },
        { name: "fine", kind: "map", source: "function(doc){ emit(doc._id, null); }" },
      ],
      { timeoutMsPerDoc: 500, memoryBytes: 16 * 1024 * 1024 },
    );
    expect(errors.map((error) => error.name)).toEqual(["loops", "hogs"]);
    const [doc] = await sandbox.run(docs(1));
    expect(doc!.results[0]).toMatchObject({ ok: false, kind: "compile" });
    expect(doc!.results[1]).toMatchObject({ ok: false, kind: "compile" });
    expect(emitsOf(doc!.results[2])).toEqual([["d0", null]]);
  });

  it("the same holds in this thread (thread: 'main')", async () => {
    const main = createSandboxFactory({ thread: "main" });
    const looping = await main.compile(
      maps("function(doc){ if (doc.n === 1) { while (true) {} } emit(doc.n, null); }", "function(doc){ function f(){ return f(); } if (doc.n === 2) f(); emit('b', doc.n); }"),
      { timeoutMsPerDoc: 500 },
    );
    // Long enough for the hog to reach the heap limit on a busy machine.
    const hogging = await main.compile(maps(`function(doc){ if (doc.n === 1) { ${HOG} } emit(doc.n, null); }`), { timeoutMsPerDoc: 20_000, memoryBytes: 16 * 1024 * 1024 });
    open.push(looping.sandbox, hogging.sandbox);
    const kinds = (outcomes: readonly { results: readonly FunctionOutcome[] }[]) => outcomes.map((doc) => doc.results.map((result) => (result.ok ? "ok" : result.kind)));
    expect(kinds(await looping.sandbox.run(docs(4)))).toEqual([
      ["ok", "ok"],
      ["timeout", "ok"],
      ["ok", "exception"],
      ["ok", "ok"],
    ]);
    expect(kinds(await hogging.sandbox.run(docs(3)))).toEqual([["ok"], ["memory"], ["ok"]]);
  });
});
