/**
 * The first run as a newcomer meets it: `upholster run` spawned with its
 * defaults prints how to get in (a server admin made for this run, its
 * password once, ready-to-paste curl lines), and following them works.
 * Also: bad flags exit 2, typos in the config are warned about by name,
 * logs are JSON or human-readable on request.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { killStarted, listeningUrl, printed, upholster } from "../support/cli.js";
import { resolveLogFormat } from "../../src/cli/log-output.js";
import { waitFor } from "../support/wait-for.js";

afterEach(killStarted);

const basic = (user: string): Record<string, string> => ({ Authorization: `Basic ${Buffer.from(user).toString("base64")}` });

/** stdout lines that are JSON log lines, parsed. */
const jsonLines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const configFile = (text: string): string => {
  const file = join(mkdtempSync(join(tmpdir(), "upholster-first-run-")), "upholster.ini");
  writeFileSync(file, text);
  return file;
};

describe("the first run", () => {
  it("prints an admin made for this run once, with curl lines that work; nothing logs the password", async () => {
    const daemon = upholster(["run", "--port", "0", "--log-format", "json"]);
    const url = await listeningUrl(daemon);
    const curlLines = await waitFor(() => {
      const lines = daemon.stdout.split("\n").filter((line) => line.trimStart().startsWith("curl -u "));
      return lines.length === 2 ? lines : undefined;
    }, `the curl lines (stdout: ${daemon.stdout})`);
    const [, user, feedUrl] = /curl -u '([^']+)' '([^']+)'/.exec(curlLines[0]!) ?? [];
    expect(feedUrl).toBe(`${url}/_db_updates?feed=continuous&heartbeat=true`);
    const password = user!.split(":")[1]!;
    expect(password.length).toBeGreaterThanOrEqual(20);
    expect(daemon.stdout).toContain(`server admin for this run (no [admins] configured): admin / ${password}`);

    // Following the lines: the feed and the queues answer the admin, and nobody else.
    const feed = await fetch(`${url}/_db_updates`, { headers: basic(user!) });
    expect(feed.status).toBe(200);
    expect(await feed.json()).toHaveProperty("results");
    const [, statusUser, statusUrl] = /curl -u '([^']+)' '([^']+)'/.exec(curlLines[1]!) ?? [];
    expect((await fetch(statusUrl!, { headers: basic(statusUser!) })).status).toBe(200);
    expect((await fetch(`${url}/_db_updates`)).status).toBe(401);

    // `upholster status` with the same admin in the URL; without, a hint how.
    const table = upholster(["status", "--url", `http://${user}@${new URL(url).host}`]);
    expect(await table.exited).toBe(0);
    expect(table.stdout).toMatch(/^channel\s+active/m);
    const refused = upholster(["status", "--url", url]);
    expect(await refused.exited).toBe(1);
    expect(refused.stderr).toContain("pass one in the URL: --url http://NAME:PASSWORD@");

    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toBe(0);
    expect(jsonLines(daemon.stdout).length).toBeGreaterThan(0);
    for (const line of jsonLines(daemon.stdout)) expect(JSON.stringify(line)).not.toContain(password);
    expect(daemon.stderr).not.toContain(password);
    expect(daemon.stdout.split(password).length - 1).toBe(3); // the admin line and the two curl lines, once
  });

  it("with [admins] configured: no admin is made, the hint names no password", async () => {
    const file = configFile("[admins]\nboss = secret\n[chttpd_auth]\niterations = 1000\n");
    const daemon = upholster(["run", "--config", file, "--port", "0", "--log-level", "warn"]);
    const url = await listeningUrl(daemon);
    await printed(daemon, "sign in as one of the [admins]");
    expect(daemon.stdout).toContain(`curl -u NAME:PASSWORD '${url}/_db_updates'`);
    expect(daemon.stdout).not.toContain("server admin for this run");
    expect((await fetch(`${url}/_smoosh/status`, { headers: basic("boss:secret") })).status).toBe(200);
    expect((await fetch(`${url}/_smoosh/status`, { headers: basic("admin:secret") })).status).toBe(401);
  });

  it("without the demo and without admins: open on loopback, said on stdout and logged once", async () => {
    const daemon = upholster(["run", "--no-demo", "--port", "0", "--log-format", "json", "--log-level", "warn"]);
    const url = await listeningUrl(daemon);
    await printed(daemon, "no server admins: anyone on this machine may use the API");
    expect((await fetch(`${url}/_smoosh/status`)).status).toBe(200);
    expect(jsonLines(daemon.stdout).filter((line) => String(line["msg"]).startsWith("no server admins"))).toHaveLength(1);
  });

  it("refuses a non-loopback bind without any admin: exit 2, saying how to fix it", async () => {
    const run = upholster(["run", "--no-demo", "--host", "0.0.0.0", "--port", "0", "--log-level", "silent"]);
    expect(await run.exited).toBe(2);
    expect(run.stderr).toContain("refusing to listen on 0.0.0.0 without a server admin");
    expect(run.stderr).toContain("[admins]");
  });
});

describe("bad command lines exit 2, like every invalid configuration", () => {
  it.each([
    [["run", "--log-level", "loud"], "loud"],
    [["run", "--log-format", "fancy"], "fancy"],
    [["run", "--frobnicate"], "--frobnicate"],
    [["status", "--url", "not a url"], "not a URL"],
    [["frobnicate"], "frobnicate"],
  ])("upholster %j", async (args, mentioned) => {
    const run = upholster(args);
    expect(await run.exited).toBe(2);
    expect(run.stderr).toContain(mentioned);
  });

  it("--help and --version still exit 0", async () => {
    for (const args of [["--help"], ["--version"], ["run", "--help"]]) expect(await upholster(args).exited).toBe(0);
  });
});

describe("configuration typos", () => {
  it("warn once each, naming the key and the nearest known one; CouchDB's own sections stay quiet", async () => {
    const file = configFile(
      "[upholster]\nport = 0\ndemo = false\n" +
        "[smoosh]\nwait_sec = 5\n[smoosh.ratio_dbs]\nmin_prio = 3.0\n[frobnicate]\nx = 1\n" +
        "[couchdb]\nuuid = abc\n[chttpd]\nport = 5984\n[log]\nlevel = info\n",
    );
    const daemon = upholster(["run", "--config", file, "--log-format", "json", "--log-level", "warn"]);
    await listeningUrl(daemon);
    const warnings = jsonLines(daemon.stdout)
      .map((line) => String(line["msg"]))
      .filter((msg) => msg.startsWith("config: "));
    expect(warnings.sort()).toEqual([
      "config: [frobnicate]: unknown section; it is ignored",
      "config: [smoosh.ratio_dbs] min_prio: unknown key (did you mean min_priority?); it is ignored",
      "config: [smoosh] wait_sec: unknown key (did you mean wait_secs?); it is ignored",
    ]);
  });
});

describe("log lines", () => {
  it("auto: pretty on a terminal, JSON otherwise; an explicit choice wins", () => {
    expect(resolveLogFormat("auto", true)).toBe("pretty");
    expect(resolveLogFormat("auto", false)).toBe("json");
    expect(resolveLogFormat("json", true)).toBe("json");
    expect(resolveLogFormat("pretty", false)).toBe("pretty");
  });

  it("are JSON when stdout is not a terminal, human-readable with --log-format pretty", async () => {
    const json = upholster(["run", "--no-demo", "--port", "0", "--log-level", "info"]);
    await listeningUrl(json);
    await waitFor(() => jsonLines(json.stdout).some((line) => line["msg"] === "HTTP API listening") || undefined, "a JSON log line");

    const pretty = upholster(["run", "--no-demo", "--port", "0", "--log-level", "info", "--log-format", "pretty"]);
    await listeningUrl(pretty);
    const line = await waitFor(() => pretty.stdout.split("\n").find((l) => l.includes("HTTP API listening")), "a pretty log line");
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: HTTP API listening \{"url":"http:\/\/127\.0\.0\.1:\d+"\}$/);
    expect(jsonLines(pretty.stdout)).toEqual([]);
  });
});
