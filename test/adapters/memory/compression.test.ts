/**
 * Bodies as CouchDB's couch_compress stores them: the sizes that decide how
 * fast a memory store's files grow (storage-model.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FileCompressionCodec, storedBodyBytes, type FileCompression } from "../../../src/adapters/memory/compression.js";
import { createMemoryStore } from "../../../src/adapters/memory/index.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";
import { createRandom } from "../../../src/adapters/memory/random.js";
import { compress } from "snappyjs";
import { randomLetters } from "../../support/random-letters.js";

const compressions = Object.keys(FileCompressionCodec.keys) as FileCompression[];
const json = fc.jsonValue().map((value) => JSON.stringify(value));

describe("stored body bytes", () => {
  it("none: the body's UTF-8 bytes", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), (text) => {
      const body = JSON.stringify({ text });
      expect(storedBodyBytes(body, "none")).toBe(Buffer.byteLength(body, "utf8"));
    }));
  });

  it("property: snappy's size is snappyjs's own, whatever the body (the kept buffers grow, bodies past 1 MiB get their own)", () => {
    const sizes = [10, 5000, 100_000, 1_200_000];
    fc.assert(
      fc.property(fc.oneof(json, fc.tuple(fc.constantFrom(...sizes), fc.string({ unit: "grapheme", minLength: 1, maxLength: 5 })).map(([n, unit]) => JSON.stringify({ t: unit.repeat(Math.ceil(n / unit.length)) }))), (body) => {
        expect(storedBodyBytes(body, "snappy")).toBe(1 + compress(Buffer.from(body, "utf8")).length);
      }),
      { numRuns: 60 },
    );
    // After a big body, a small one still comes out right (the kept buffers are not left dirty in a way that matters).
    storedBodyBytes(JSON.stringify({ t: "é".repeat(600_000) }), "snappy");
    const small = JSON.stringify({ n: 1, t: "abc" });
    expect(storedBodyBytes(small, "snappy")).toBe(1 + compress(Buffer.from(small, "utf8")).length);
  });

  it("property: snappy costs at most snappy's bound (32 + n + n/6) and its marker byte; deflate never more than the plain body", () => {
    fc.assert(fc.property(json, (body) => {
      const raw = Buffer.byteLength(body, "utf8");
      expect(storedBodyBytes(body, "snappy")).toBeLessThanOrEqual(1 + 32 + raw + Math.ceil(raw / 6));
      expect(storedBodyBytes(body, "snappy")).toBeGreaterThanOrEqual(2);
      for (const level of [1, 6, 9] as const) expect(storedBodyBytes(body, `deflate_${level}`)).toBeLessThanOrEqual(raw);
    }));
  });

  it("property: repeated text shrinks to a small fraction; random letters keep their size (as measured on CouchDB 3.4.3)", () => {
    fc.assert(fc.property(fc.integer({ min: 300, max: 5000 }), fc.constantFrom("x", "ab", "abc"), fc.integer({ min: 0 }), (length, unit, seed) => {
      const repeated = JSON.stringify({ n: 1, body: unit.repeat(Math.ceil(length / unit.length)) });
      for (const compression of compressions.filter((c) => c !== "none")) {
        expect(storedBodyBytes(repeated, compression)).toBeLessThan(repeated.length / 5);
      }
      const random = createRandom(seed);
      const letters = JSON.stringify({ n: 1, body: randomLetters(random, length) });
      expect(storedBodyBytes(letters, "snappy")).toBeGreaterThanOrEqual(letters.length);
    }));
  });
});

describe("a memory store's files compress bodies", () => {
  /** Live bytes per document of 2,000 documents of `body`, written in batches of 500. */
  const activePerDoc = async (body: (i: number) => string, fileCompression?: FileCompression): Promise<number> => {
    const store = createMemoryStore({ scheduler: new VirtualScheduler(), autoIndexDelayMs: false, model: fileCompression === undefined ? {} : { fileCompression } });
    store.createDb("db");
    for (let b = 0; b < 2000; b += 500) {
      store.writeDocs("db", Array.from({ length: 500 }, (_, i) => ({ _id: `doc${String(b + i).padStart(6, "0")}`, n: b + i, body: body(b + i) })));
    }
    return ((await store.dbInfo("db"))?.activeBytes ?? 0) / 2000;
  };

  it("calibration: bodies of 250 repeated characters live in ~183 B a doc, random letters in ~425 B (CouchDB 3.4.3, q=1)", async () => {
    const random = createRandom(3);
    const repeated = await activePerDoc(() => "x".repeat(250));
    const letters = await activePerDoc(() => randomLetters(random, 250));
    expect(repeated).toBeGreaterThan(183 * 0.9);
    expect(repeated).toBeLessThan(183 * 1.1);
    expect(letters).toBeGreaterThan(425 * 0.9);
    expect(letters).toBeLessThan(425 * 1.1);
  });

  it("[couchdb] file_compression = none stores the JSON as it is: the repeated body costs its full length", async () => {
    const snappy = await activePerDoc(() => "x".repeat(2000));
    const none = await activePerDoc(() => "x".repeat(2000), "none");
    expect(none - snappy).toBeGreaterThan(1800);
  });
});
