/**
 * `upholster deploy-ddoc` as a user runs it, against a running `upholster
 * run` (the in-memory store, its document API): the new version is staged,
 * built and swapped in; interrupting the command leaves the deploy going on
 * in upholster, and the same command follows it again. Waits are for
 * conditions, never on durations.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { killStarted, listeningUrl, printed, upholster } from "../support/cli.js";

afterEach(killStarted);

const VIEWS = { views: { by_n: { map: "function (doc) { emit(doc.n, 1); }", reduce: "_sum" } } };
const NEXT = { views: { by_n: { map: "function (doc) { emit(-doc.n, 1); }", reduce: "_sum" } } };
const LATER = { views: { by_n: { map: "function (doc) { emit(doc.n * 2, 1); }", reduce: "_sum" } } };

async function daemonWithDb(): Promise<{ url: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "upholster-deploy-"));
  const config = join(dir, "upholster.ini");
  writeFileSync(config, `[upholster]\nstate_dir = ${join(dir, "state")}\n\n[fabric]\nindex_updater_delay_msec = 50\n\n[ken]\ndeploy_check_msec = 100\n`);
  const daemon = upholster(["run", "--port", "0", "--no-demo", "--log-level", "warn", "--config", config]);
  const url = await listeningUrl(daemon);
  const put = (path: string, body: unknown) => fetch(`${url}${path}`, { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  expect((await put("/shop", {})).status).toBe(201);
  expect((await put("/shop/_design/app", VIEWS)).status).toBe(201);
  const docs = Array.from({ length: 2000 }, (_, i) => ({ _id: `d${i}`, n: i }));
  const bulk = await fetch(`${url}/shop/_bulk_docs`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ docs }) });
  expect(bulk.status).toBe(201);
  return { url, dir };
}

const file = (dir: string, name: string, body: unknown): string => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ _id: "_design/app", ...(body as object) }));
  return path;
};

const liveDdoc = async (url: string): Promise<unknown> => (await fetch(`${url}/shop/_design/app`)).json();

describe("upholster deploy-ddoc", () => {
  it("stages, builds, swaps in and removes the stage, printing each phase", async () => {
    const { url, dir } = await daemonWithDb();
    const deploy = upholster(["deploy-ddoc", "--url", url, "--db", "shop", "--file", file(dir, "next.json", NEXT)]);
    expect(await deploy.exited).toBe(0);
    expect(deploy.stdout).toMatch(/deploy of _design\/app in shop: started/);
    expect(deploy.stdout).toMatch(/done/);
    expect(await liveDdoc(url)).toMatchObject(NEXT);
    expect((await fetch(`${url}/shop/_design/app.upholster-stage`)).status).toBe(404);
    const status = upholster(["status", "--url", url]);
    expect(await status.exited).toBe(0);
    expect(status.stdout).toMatch(/deploy shop _design\/app: done/);
  });

  it("interrupted, the deploy goes on in upholster; the same command follows it again", async () => {
    const { url, dir } = await daemonWithDb();
    const path = file(dir, "later.json", LATER);
    const first = upholster(["deploy-ddoc", "--url", url, "--db", "shop", "--file", path]);
    await printed(first, "started");
    first.child.kill("SIGINT");
    const code = await first.exited;
    // Interrupted while following (130), unless it had finished already (0).
    expect([0, 130]).toContain(code);
    if (code === 130) expect(first.stderr).toContain("the deploy goes on in upholster");
    const again = upholster(["deploy-ddoc", "--url", url, "--db", "shop", "--file", path]);
    expect(await again.exited).toBe(0);
    expect(again.stdout).toMatch(/already in progress, following it|started/);
    expect(again.stdout).toMatch(/done/);
    expect(await liveDdoc(url)).toMatchObject(LATER);
  });

  it("a bad command line or file exits 2, a refusal 1", async () => {
    const { url, dir } = await daemonWithDb();
    const noDb = upholster(["deploy-ddoc", "--url", url, "--file", file(dir, "x.json", NEXT)]);
    expect(await noDb.exited).toBe(2);
    expect(noDb.stderr).toContain("--db");
    const notJson = join(dir, "bad.json");
    writeFileSync(notJson, "{ nope");
    const bad = upholster(["deploy-ddoc", "--url", url, "--db", "shop", "--file", notJson]);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr).toContain("is not JSON");
    const wrongId = upholster(["deploy-ddoc", "--url", url, "--db", "shop", "--ddoc", "other", "--file", file(dir, "y.json", NEXT)]);
    expect(await wrongId.exited).toBe(1);
    expect(wrongId.stderr).toMatch(/deploy refused \(400\): doc._id/);
  });
});
