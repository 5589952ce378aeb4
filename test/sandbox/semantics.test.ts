/**
 * The sandbox's globals and results behave as couchjs's (share/server/views.js,
 * util.js): emit, log, toJSON, sum, isArray, and hastings' st_index.
 * Both engines run these: the QuickJS sandbox, and node-vm (the same prelude
 * in V8, for trusted functions), which must give the very same outcomes.
 */
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createSandboxFactory } from "../../src/adapters/sandbox/index.js";
import type { DocOutcome, IndexSandbox } from "../../src/ports/sandbox.js";
import { compilingCleanly, emitsOf, maps } from "../support/sandbox.js";

const open: IndexSandbox[] = [];
afterEach(() => open.splice(0).forEach((sandbox) => sandbox.dispose()));
afterAll(() => open.forEach((sandbox) => sandbox.dispose()));

describe.each(["quickjs", "node-vm"] as const)("sandbox (%s): emit and the couchjs helpers", (engine) => {
  const factory = createSandboxFactory({ engine });

  const compiled = compilingCleanly(factory, open);

  const only = (outcomes: readonly DocOutcome[]): DocOutcome => {
    expect(outcomes).toHaveLength(1);
    return outcomes[0]!;
  };

  it("runs the two-map design doc of the benchmark: one result per function per document, in order", async () => {
    const sandbox = await compiled(maps("function(doc){ if(doc.type==='a') emit(doc.n, 1); }", "function(doc){ emit([doc.type, doc.n], doc.v); }"));
    const out = await sandbox.run([
      { _id: "x", type: "a", n: 1, v: { p: 2 } },
      { _id: "y", type: "b", n: 2, v: null },
    ]);
    expect(out).toEqual([
      { id: "x", results: [{ ok: true, emits: [[1, 1]] }, { ok: true, emits: [[["a", 1], { p: 2 }]] }], logs: [] },
      { id: "y", results: [{ ok: true, emits: [] }, { ok: true, emits: [[["b", 2], null]] }], logs: [] },
    ]);
  });

  it("turns undefined keys and values into null, and keeps every emit of a call in order", async () => {
    const sandbox = await compiled(maps("function(doc){ emit(); emit(doc.missing, 1); emit('k'); emit(doc._id, doc.nothing); emit(NaN, Infinity); }"));
    const doc = only(await sandbox.run([{ _id: "d" }]));
    expect(emitsOf(doc.results[0])).toEqual([
      [null, null],
      [null, 1],
      ["k", null],
      ["d", null],
      [null, null],
    ]);
  });

  it("copies emitted values when emitted: later changes to them do not show", async () => {
    const sandbox = await compiled(maps("function(doc){ var v = {n: 1, list: [1]}; emit('k', v); v.n = 2; v.list.push(2); emit('k2', v); }"));
    const doc = only(await sandbox.run([{ _id: "d" }]));
    expect(emitsOf(doc.results[0])).toEqual([
      ["k", { n: 1, list: [1] }],
      ["k2", { n: 2, list: [1, 2] }],
    ]);
  });

  it("emits JSON clones of whatever JSON the document holds (property)", async () => {
    const sandbox = await compiled(maps("function(doc){ emit(doc.key, doc.value); emit([doc.key, doc._id], {v: doc.value}); }"));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ key: fc.jsonValue(), value: fc.jsonValue() }), { minLength: 1, maxLength: 20 }), async (fields) => {
        const docs = fields.map((f, i) => ({ _id: `d${i}`, ...f }));
        const out = await sandbox.run(docs);
        const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null));
        out.forEach((doc, i) => {
          const { key, value } = docs[i]!;
          expect(doc.id).toBe(`d${i}`);
          expect(emitsOf(doc.results[0])).toEqual([
            [asJson(key), asJson(value)],
            [[asJson(key), `d${i}`], { v: asJson(value) }],
          ]);
        });
      }),
      { numRuns: 50 },
    );
  });

  it("log() collects lines per document, JSON for non-strings, in call order across functions", async () => {
    const sandbox = await compiled(maps("function(doc){ log('one ' + doc._id); log({a: [1]}); log(7); }", "function(doc){ log(null); log(undefined); }"));
    const out = await sandbox.run([{ _id: "a" }, { _id: "b" }]);
    expect(out.map((doc) => doc.logs)).toEqual([
      ["one a", '{"a":[1]}', "7", "null", "undefined"],
      ["one b", '{"a":[1]}', "7", "null", "undefined"],
    ]);
  });

  it("toJSON, sum and isArray behave as couchjs's", async () => {
    const sandbox = await compiled(
      maps("function(doc){ emit('json', toJSON(doc.v)); emit('sum', sum(doc.list)); emit('empty', sum([])); emit('arrays', [isArray(doc.list), isArray(doc.v), isArray('x')]); }"),
    );
    const doc = only(await sandbox.run([{ _id: "d", v: { a: [1, "x"] }, list: [1, 2, 3.5] }]));
    expect(emitsOf(doc.results[0])).toEqual([
      ["json", '{"a":[1,"x"]}'],
      ["sum", 6.5],
      ["empty", 0],
      ["arrays", [true, false, false]],
    ]);
  });

  it("accepts the source forms found in design docs", async () => {
    const sources = [
      "function(doc) { emit(1, null); }",
      "function (doc)\n{\n  // a comment\n  emit(2, null);\n}\n",
      "  /* leading */ function named(doc) { emit(3, null); }  // trailing comment",
      "(doc) => { emit(4, null); }",
      "doc => emit(5, null)",
      "function(doc) { emit(6, null); };\n",
      "var helper = function (x) { return x * 7; }; (function (doc) { emit(helper(1), null); })",
    ];
    const sandbox = await compiled(maps(...sources));
    const doc = only(await sandbox.run([{ _id: "d" }]));
    expect(doc.results.map((result) => emitsOf(result)[0]?.[0])).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("st_index functions collect each geometry as JSON; emit is not theirs, and st_index is not a map's", async () => {
    const { sandbox, errors } = await factory.compile([
      { name: "geo", kind: "st_index", source: "function(doc){ if (doc.geometry) st_index(doc.geometry); if (doc.second) st_index(doc.second); }" },
      { name: "geo-emits", kind: "st_index", source: "function(doc){ emit(1, 2); }" },
      { name: "map-indexes", kind: "map", source: "function(doc){ st_index(doc.geometry); }" },
    ]);
    open.push(sandbox);
    expect(errors).toEqual([]);
    const point = { type: "Point", coordinates: [1.5, -2] };
    const line = { type: "LineString", coordinates: [[0, 0], [1, 1]] };
    const [withTwo, without] = await sandbox.run([{ _id: "g", geometry: point, second: line }, { _id: "n" }]);
    expect(withTwo!.results[0]).toEqual({ ok: true, geometries: [point, line] });
    expect(without!.results[0]).toEqual({ ok: true, geometries: [] });
    expect(withTwo!.results[1]).toMatchObject({ ok: false, kind: "exception", error: expect.stringContaining("emit() is only available in map functions") });
    expect(withTwo!.results[2]).toMatchObject({ ok: false, kind: "exception", error: expect.stringContaining("st_index() is only available in st_index functions") });
  });

  it("keeps order and ids over runs larger than one internal batch, and answers an empty run", async () => {
    const sandbox = await compiled(maps("function(doc){ emit(doc.n, null); }"));
    const docs = Array.from({ length: 1234 }, (_, n) => ({ _id: `doc-${n}`, n, pad: "x".repeat(n % 50) }));
    const out = await sandbox.run(docs);
    expect(out.map((doc) => doc.id)).toEqual(docs.map((doc) => doc._id));
    expect(out.map((doc) => emitsOf(doc.results[0])[0]?.[0])).toEqual(docs.map((doc) => doc.n));
    expect(await sandbox.run([])).toEqual([]);
  });

  it("reports a document it cannot send as JSON as a failure of that document only", async () => {
    const sandbox = await compiled(maps("function(doc){ emit(doc._id, null); }"));
    const cyclic: Record<string, unknown> = { _id: "cyclic" };
    cyclic.self = cyclic;
    const out = await sandbox.run([{ _id: "before" }, cyclic, { _id: "after" }, { n: 1 }]);
    expect(out.map((doc) => doc.id)).toEqual(["before", "cyclic", "after", ""]);
    expect(emitsOf(out[0]!.results[0])).toEqual([["before", null]]);
    expect(out[1]!.results[0]).toMatchObject({ ok: false, kind: "exception", error: expect.stringContaining("not JSON") });
    expect(emitsOf(out[2]!.results[0])).toEqual([["after", null]]);
    expect(emitsOf(out[3]!.results[0])).toEqual([[null, null]]);
  });

  it("cuts a long run into batches and answers every document in order, a failure in a later batch included", async () => {
    const sandbox = await compiled(maps("function(doc){ emit(doc.n, null); }"));
    // 500 documents a batch: three batches, the cyclic one in the second.
    const docs: Record<string, unknown>[] = Array.from({ length: 1_200 }, (_, n) => ({ _id: `d${n}`, n }));
    const cyclic: Record<string, unknown> = { _id: "cyclic", n: -1 };
    cyclic.self = cyclic;
    docs[700] = cyclic;
    const out = await sandbox.run(docs);
    expect(out.map((doc) => doc.id)).toEqual(docs.map((doc) => doc._id));
    expect(out[700]!.results[0]).toMatchObject({ ok: false, kind: "exception", error: expect.stringContaining("not JSON") });
    expect(out.filter((doc) => doc.results[0]?.ok !== true)).toHaveLength(1);
    expect(emitsOf(out[1_199]!.results[0])).toEqual([[1_199, null]]);
  });
});
