/** StatePort adapters: files (atomic, corruption-tolerant) and memory. */
import fc from "fast-check";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileStatePort, createMemoryStatePort, stateFileName } from "../../../src/adapters/state/index.js";

const dirs: string[] = [];
const tempDir = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), "upholster-state-"));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("file state port", () => {
  it("round-trips JSON values, creating the directory; missing keys load undefined", async () => {
    const dir = join(await tempDir(), "nested", "state");
    const port = createFileStatePort(dir);
    expect(await port.load("smoosh")).toBeUndefined();
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 20 }), fc.jsonValue(), async (key, value) => {
        await port.save(key, value);
        // JSON has no -0: compare with what JSON itself gives back.
        expect(await port.load(key)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 50 },
    );
  });

  it("keys cannot escape the directory", () => {
    fc.assert(
      fc.property(fc.string(), (key) => {
        const name = stateFileName(key);
        expect(name).not.toMatch(/[/\\]/);
        expect(name.startsWith(".")).toBe(false);
      }),
    );
    fc.assert(fc.property(fc.string(), fc.string(), (a, b) => {
      if (a !== b) expect(stateFileName(a)).not.toBe(stateFileName(b));
    }));
  });

  it("concurrent saves of one key end with the last value and leave no temp files", async () => {
    const dir = await tempDir();
    const port = createFileStatePort(dir);
    await Promise.all(Array.from({ length: 20 }, (_, i) => port.save("k", { i, pad: "x".repeat(i * 100) })));
    expect(await port.load("k")).toMatchObject({ i: 19 });
    expect(await readdir(dir)).toEqual(["k.json"]);
  });

  it("a corrupt file loads as undefined, is set aside, and is reported", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "k.json"), "{ half a docum");
    const reported: string[] = [];
    const port = createFileStatePort(dir, { onCorrupt: (key) => reported.push(key) });
    expect(await port.load("k")).toBeUndefined();
    expect(reported).toEqual(["k"]);
    expect(await readFile(join(dir, "k.json.corrupt"), "utf8")).toBe("{ half a docum");
    await port.save("k", [1]);
    expect(await port.load("k")).toEqual([1]);
  });

  it("a value that is not JSON is refused without touching the saved one", async () => {
    const port = createFileStatePort(await tempDir());
    await port.save("k", { ok: true });
    await expect(port.save("k", undefined)).rejects.toThrow(/not JSON/);
    expect(await port.load("k")).toEqual({ ok: true });
  });
});

describe("memory state port", () => {
  it("round-trips copies, not references", async () => {
    const port = createMemoryStatePort({ seeded: 1 });
    expect(await port.load("seeded")).toBe(1);
    const value = { list: [1, 2] };
    await port.save("k", value);
    value.list.push(3);
    expect(await port.load("k")).toEqual({ list: [1, 2] });
    expect(port.keys()).toEqual(["k", "seeded"]);
    await expect(port.save("bad", () => 1)).rejects.toThrow(/not JSON/);
  });
});
