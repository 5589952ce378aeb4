/**
 * Functions that cannot write to their document share one parsed copy; the
 * check must catch every ordinary way of writing to it, so that sharing never
 * shows one function's changes to another.
 */
import { afterAll, describe, expect, it } from "vitest";
import { mayWriteDocument } from "../../src/adapters/sandbox/document-writes.js";
import { createSandboxFactory } from "../../src/adapters/sandbox/index.js";
import type { IndexSandbox } from "../../src/ports/sandbox.js";

/** Bodies of `function(doc){ ... }` that write to the document, each in a common way. */
const WRITERS = [
  "doc.type = 'changed';",
  "doc.n += 1;",
  "doc.n++;",
  "++doc.n;",
  "doc.nested.list[0] = 99;",
  "doc['type'] = 'changed';",
  "delete doc.type;",
  "doc.nested.list.push(2);",
  "doc.nested.list.sort(function(a, b){ return b - a; });",
  "doc.nested.list.reverse();",
  "doc.nested.list.splice(0, 1);",
  "doc.nested.list.length = 0;",
  "Object.assign(doc, {type: 'changed'});",
  "Object.defineProperty(doc, 'type', {value: 'changed'});",
  "var list = doc.nested.list; list.pop();",
  "var o = doc.nested; o.extra = 1;",
  "[doc.type] = ['changed'];",
  "({type: doc.type} = {type: 'changed'});",
  "for (doc.type in {changed: 1}) {}",
  "doc.nested.list.forEach(function(x, i, all){ all[i] = 0; });",
  "Array.prototype.push.call(doc.nested.list, 5);",
  "eval('doc.type = 1');",
  "new Function('d', 'd.type = 1')(doc);",
  "(function(){ arguments[0].type = 'changed'; })(doc);",
  "var k = 'type'; doc[k] = 'changed';",
  "doc.nested &&= {};",
  "doc.nested.list.fill(0);",
  "doc.nested.list.copyWithin(0, 1);",
];

const READERS = [
  "function(doc){ if(doc.type==='a') emit(doc.n, 1); }",
  "function(doc){ emit([doc.type, doc.n], doc.v); }",
  "function(doc){ if (doc.geometry) st_index(doc.geometry); }",
  "function(doc) {\n  // doc.type = 'x' in a comment\n  var key = doc.a + '=' + doc.b; /* delete doc.x */\n  for (var i = 0; i < 3; i++) emit([key, i], null);\n}",
  "(doc) => { if (doc.tags) doc.tags.forEach(function (tag) { emit(tag.toLowerCase(), 1); }); }",
  "function(doc){ var total = 0; for (var k in doc.items) total += doc.items[k]; emit(doc._id, total); }",
  "function(doc){ if (/^a=b/.test(doc.s) && doc.n >= 1 && doc.m <= 2 && doc.o !== 3) emit(doc.n / 2, null); }",
  "function(doc){ emit(Math.max(doc.a, doc.b), new Date(doc.when).getTime()); }",
];

describe("sandbox: which functions may write to their document", () => {
  it("flags every ordinary way of writing", () => {
    for (const body of WRITERS) expect({ body, writes: mayWriteDocument(`function(doc){ ${body} }`) }).toEqual({ body, writes: true });
  });

  it("lets plain readers share, whatever is in their strings, comments and regular expressions", () => {
    for (const source of READERS) expect({ source, writes: mayWriteDocument(source) }).toEqual({ source, writes: false });
  });

  it("gives up on what it does not scan (template literals, unterminated literals, non-ASCII names)", () => {
    expect(mayWriteDocument("function(doc){ emit(`${doc.a}`, 1); }")).toBe(true);
    expect(mayWriteDocument("function(doc){ emit('open, 1); }")).toBe(true);
    expect(mayWriteDocument("function(doc){ var é = doc.a; emit(é, 1); }")).toBe(true);
  });
});

describe.each(["quickjs", "node-vm"] as const)("sandbox (%s): sharing never shows one function's writes to another", (engine) => {
  const factory = createSandboxFactory({ engine });
  const open: IndexSandbox[] = [];
  afterAll(() => open.forEach((sandbox) => sandbox.dispose()));

  it("each writer, placed between two readers, leaves the next reader the stored document", async () => {
    const reader = "function(doc){ emit(doc.type, [doc.n, doc.nested]); }";
    const functions = WRITERS.flatMap((body, i) => [
      { name: `reader-${i}`, kind: "map" as const, source: reader },
      { name: `writer-${i}`, kind: "map" as const, source: `function(doc){ ${body} emit('wrote', ${i}); }` },
    ]);
    functions.push({ name: "last-reader", kind: "map", source: reader });
    const { sandbox, errors } = await factory.compile(functions);
    open.push(sandbox);
    expect(errors).toEqual([]);
    const [doc] = await sandbox.run([{ _id: "d", type: "original", n: 1, nested: { list: [1, 2] } }]);
    const stored = { ok: true, emits: [["original", [1, { list: [1, 2] }]]] };
    doc!.results.forEach((result, i) => {
      const name = functions[i]!.name;
      if (name.includes("reader")) expect({ name, result }).toEqual({ name, result: stored });
    });
  });
});
