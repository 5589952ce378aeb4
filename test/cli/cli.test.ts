/**
 * The CLI as a user meets it: spawned processes, real ports, real signals.
 * Waits are for conditions (a line printed, a process exited) with generous
 * limits, never assertions on how long something took.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { upholster, listeningUrl, killStarted, printed } from "../support/cli.js";
import { afterEach, describe, expect, it } from "vitest";


afterEach(killStarted);

describe("upholster CLI", () => {
  it("--help lists the commands, and each command has its own help", async () => {
    const top = upholster(["--help"]);
    expect(await top.exited).toBe(0);
    expect(top.stdout).toContain("run [options]");
    expect(top.stdout).toContain("status [options]");
    const run = upholster(["run", "--help"]);
    expect(await run.exited).toBe(0);
    for (const flag of ["--config", "--port", "--host", "--no-demo", "--log-level", "--log-format"]) expect(run.stdout).toContain(flag);
    const status = upholster(["status", "--help"]);
    expect(await status.exited).toBe(0);
    expect(status.stdout).toContain("--url");
    expect(status.stdout).toContain("--json");
  });

  it("run --port 0 prints where it listens; status --url prints the channels; SIGTERM stops it cleanly", async () => {
    const daemon = upholster(["run", "--port", "0", "--no-demo", "--log-level", "warn"]);
    const url = await listeningUrl(daemon);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const status = upholster(["status", "--url", url]);
    expect(await status.exited).toBe(0);
    // The channels' table, then (after a blank line) the indexing status.
    const [channelTable = "", indexing = ""] = status.stdout.trim().split("\n\n");
    expect(indexing).toMatch(/^indexing \(catch-up\): 0 pending/);
    const lines = channelTable.split("\n");
    expect(lines[0]).toMatch(/^channel\s+active\s+starting\s+waiting\s+min\s+max$/);
    const names = lines.slice(1).map((line) => line.split(/\s+/)[0]);
    expect(names.sort()).toEqual(["index_cleanup", "ratio_dbs", "ratio_views", "slack_dbs", "slack_views", "upgrade_dbs", "upgrade_views"]);
    expect(lines[1]).toMatch(/\s0\s+0\s+0\s+0\s+0$/);

    const json = upholster(["status", "--url", url, "--json"]);
    expect(await json.exited).toBe(0);
    const body = JSON.parse(json.stdout) as { channels: Record<string, { waiting: { size: number } }> };
    expect(Object.keys(body.channels).sort()).toEqual(names.sort());

    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toBe(0);
  });

  it("the demo starts by default and the config file is honoured (port, demo = false)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "upholster-cli-"));
    const file = join(dir, "upholster.ini");
    writeFileSync(file, "[upholster]\nport = 0\ndemo = false\nlog_level = warn\n\n[smoosh]\nwait_secs = 5\n");
    writeFileSync(file, "[admins]\nadmin = secret\n[chttpd_auth]\niterations = 1000\n", { flag: "a" });
    const quiet = upholster(["run", "--config", file]);
    const url = await listeningUrl(quiet);
    // The store line says whether the demo runs; it may come in a chunk of its own.
    await printed(quiet, "store: memory");
    expect(quiet.stdout).not.toContain("demo workload");
    // The db updates feed is mounted, for the [admins] of the file only.
    expect((await fetch(`${url}/_db_updates`)).status).toBe(401);
    const feed = await fetch(`${url}/_db_updates`, { headers: { Authorization: `Basic ${Buffer.from("admin:secret").toString("base64")}` } });
    expect(feed.status).toBe(200);
    expect(await feed.json()).toHaveProperty("results");
    quiet.child.kill("SIGINT");
    expect(await quiet.exited).toBe(0);

    const demo = upholster(["run", "--port", "0", "--log-level", "warn"]);
    await printed(demo, "demo workload on 6 dbs");
    demo.child.kill("SIGINT");
    expect(await demo.exited).toBe(0);
  });

  it("a bad config file exits 2 and names every section, key and value", async () => {
    const dir = mkdtempSync(join(tmpdir(), "upholster-cli-"));
    const file = join(dir, "bad.ini");
    writeFileSync(file, "[smoosh]\nwait_secs = soon\n\n[smoosh.ratio_dbs]\nmin_priority = lots\n\n[upholster]\nport = 70000\n\n[global_changes]\nmax_write_delay = soon\n");
    const run = upholster(["run", "--config", file]);
    expect(await run.exited).toBe(2);
    expect(run.stderr).toContain('[smoosh] wait_secs = "soon"');
    expect(run.stderr).toContain('[smoosh.ratio_dbs] min_priority = "lots"');
    expect(run.stderr).toContain('[upholster] port = "70000"');
    expect(run.stderr).toContain('[global_changes] max_write_delay = "soon"');
  });

  it("bad flags are reported like config values; a missing file is named", async () => {
    const flags = upholster(["run", "--port", "http"]);
    expect(await flags.exited).toBe(2);
    expect(flags.stderr).toContain('[upholster] port = "http"');
    const missing = upholster(["run", "--config", "/nonexistent/upholster.ini"]);
    expect(await missing.exited).toBe(2);
    expect(missing.stderr).toContain("/nonexistent/upholster.ini");
  });

  it("a port already taken exits 1 with the reason", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const run = upholster(["run", "--port", String(port), "--no-demo", "--log-level", "silent"]);
      expect(await run.exited).toBe(1);
      expect(run.stderr).toContain("EADDRINUSE");
    } finally {
      blocker.close();
    }
  });

  it("status against nothing listening exits 1 and says where it looked", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    const status = upholster(["status", "--url", `http://127.0.0.1:${port}`]);
    expect(await status.exited).toBe(1);
    expect(status.stderr).toContain(`cannot reach upholster at http://127.0.0.1:${port}`);
  });
});
