/**
 * What one function does stays with it: its document changes, its throws, its
 * globals; and nothing of the host is reachable from inside. The node-vm
 * engine (trusted functions only: not a security boundary) keeps the same
 * per-function isolation, so it runs these too.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSandboxFactory } from "../../src/adapters/sandbox/index.js";
import type { IndexSandbox } from "../../src/ports/sandbox.js";
import { compilingInto, emitsOf, maps } from "../support/sandbox.js";

const open: IndexSandbox[] = [];
afterEach(() => open.splice(0).forEach((sandbox) => sandbox.dispose()));

describe.each(["quickjs", "node-vm"] as const)("sandbox (%s): isolation", (engine) => {
  const compiled = compilingInto(createSandboxFactory({ engine }), open);

  it("gives each function its own copy of the document", async () => {
    const { sandbox } = await compiled(
      maps(
        "function(doc){ doc.type = 'changed'; doc.nested.list.push(99); delete doc.n; emit(doc.type, doc.nested.list.length); }",
        "function(doc){ emit(doc.type, [doc.n, doc.nested.list]); }",
      ),
    );
    const original = { _id: "d", type: "original", n: 1, nested: { list: [1] } };
    const [doc] = await sandbox.run([original]);
    expect(emitsOf(doc!.results[0])).toEqual([["changed", 2]]);
    expect(emitsOf(doc!.results[1])).toEqual([["original", [1, [1]]]]);
    expect(original).toEqual({ _id: "d", type: "original", n: 1, nested: { list: [1] } });
  });

  it("a throw fails that function on that document only, and discards what it emitted before throwing", async () => {
    const { sandbox } = await compiled(
      maps(
        "function(doc){ emit('before', 1); if (doc.bad) throw new TypeError('bad doc ' + doc._id); emit('after', 2); }",
        "function(doc){ emit(doc._id, null); }",
        "function(doc){ if (doc.bad) throw {not: 'an error'}; emit('fine', null); }",
      ),
    );
    const out = await sandbox.run([{ _id: "a" }, { _id: "b", bad: true }, { _id: "c" }]);
    expect(emitsOf(out[0]!.results[0])).toEqual([
      ["before", 1],
      ["after", 2],
    ]);
    expect(out[1]!.results[0]).toEqual({ ok: false, kind: "exception", error: "TypeError: bad doc b" });
    expect(emitsOf(out[1]!.results[1])).toEqual([["b", null]]);
    expect(out[1]!.results[2]).toEqual({ ok: false, kind: "exception", error: '{"not":"an error"}' });
    expect(emitsOf(out[2]!.results[0])).toEqual([
      ["before", 1],
      ["after", 2],
    ]);
    expect(emitsOf(out[2]!.results[2])).toEqual([["fine", null]]);
  });

  it("reports compile errors per function; the others work, the failed ones fail as compile on every document", async () => {
    const { sandbox, errors } = await compiled([
      { name: "ok", kind: "map", source: "function(doc){ emit(1, 1); }" },
      { name: "syntax", kind: "map", source: "function(doc){ emit(" },
      { name: "not-a-function", kind: "map", source: "42" },
      { name: "throws", kind: "map", source: "(function(){ throw new Error('at load'); })()" },
      { name: "empty", kind: "map", source: "" },
    ]);
    expect(errors.map((error) => error.name)).toEqual(["syntax", "not-a-function", "throws", "empty"]);
    expect(errors.find((error) => error.name === "throws")?.error).toContain("at load");
    expect(errors.find((error) => error.name === "not-a-function")?.error).toContain("does not evaluate to a function");
    const out = await sandbox.run([{ _id: "a" }, { _id: "b" }]);
    for (const doc of out) {
      expect(emitsOf(doc.results[0])).toEqual([[1, 1]]);
      for (const result of doc.results.slice(1)) expect(result).toMatchObject({ ok: false, kind: "compile" });
    }
  });

  // Not a node-vm promise: it is no sandbox, and V8 gives every context console and WebAssembly.
  it.skipIf(engine === "node-vm")("reaches nothing of Node or the host: no process, require, fetch, timers, console", async () => {
    const { sandbox } = await compiled(
      maps(
        `function(doc){
          emit('types', [typeof process, typeof require, typeof globalThis.fetch, typeof setTimeout, typeof setInterval,
                         typeof setImmediate, typeof queueMicrotask, typeof console, typeof module, typeof Buffer, typeof WebAssembly]);
          emit('time', [typeof Date.now(), typeof Math.random()]);
        }`,
        "function(doc){ process.exit(1); }",
        "function(doc){ require('fs'); }",
        "function(doc){ setTimeout(function(){}, 1); }",
        "function(doc){ emit('escape', (function(){ return this; })() === globalThis); emit('ctor', this.constructor.constructor('return typeof process')()); }",
      ),
    );
    const [doc] = await sandbox.run([{ _id: "d" }]);
    expect(emitsOf(doc!.results[0])).toEqual([
      ["types", Array(11).fill("undefined")],
      ["time", ["number", "number"]],
    ]);
    expect(doc!.results[1]).toMatchObject({ ok: false, kind: "exception", error: expect.stringContaining("ReferenceError") });
    expect(doc!.results[2]).toMatchObject({ ok: false, kind: "exception", error: expect.stringContaining("ReferenceError") });
    expect(doc!.results[3]).toMatchObject({ ok: false, kind: "exception", error: expect.stringContaining("ReferenceError") });
    // The Function constructor only builds more guest code: its globalThis is the guest's.
    expect(emitsOf(doc!.results[4])).toEqual([
      ["escape", true],
      ["ctor", "undefined"],
    ]);
  });

  it("two sandboxes share no globals, even from the same factory and thread", async () => {
    const writer = await compiled(maps("function(doc){ globalThis.shared = (globalThis.shared || 0) + 1; Array.prototype.extra = 'leak'; emit(shared, null); }"));
    const reader = await compiled(maps("function(doc){ emit(typeof globalThis.shared, typeof [].extra); }"));
    await writer.sandbox.run([{ _id: "a" }, { _id: "b" }]);
    const [doc] = await reader.sandbox.run([{ _id: "c" }]);
    expect(emitsOf(doc!.results[0])).toEqual([["undefined", "undefined"]]);
  });

  it("a function that overwrites the helpers or JSON cannot break the batch loop or another design doc", async () => {
    const vandal = await compiled(
      maps(
        "function(doc){ emit = function(){}; log = null; JSON.stringify = function(){ return 'garbage'; }; JSON.parse = function(){ return {}; }; emit(doc._id, 1); }",
        "function(doc){ emit(doc._id, 2); }",
      ),
    );
    const out = await vandal.sandbox.run([{ _id: "a" }, { _id: "b" }]);
    expect(out.map((doc) => doc.results.map((result) => emitsOf(result)))).toEqual([
      [[["a", 1]], [["a", 2]]],
      [[["b", 1]], [["b", 2]]],
    ]);
    const bystander = await compiled(maps("function(doc){ emit(JSON.stringify(doc._id), 3); }"));
    const [doc] = await bystander.sandbox.run([{ _id: "c" }]);
    expect(emitsOf(doc!.results[0])).toEqual([['"c"', 3]]);
  });
});
