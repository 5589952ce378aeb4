/**
 * `upholster run --couch URL` as a user meets it: a spawned upholster against
 * a spawned PouchDB Server (the dev dependency) with an admin, real ports.
 * The password must never appear in anything upholster prints.
 */
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { upholster, listeningUrl, killStarted, printed } from "../support/cli.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startPouchDbServer, type PouchDbServer } from "../support/pouchdb-server.js";
import { waitFor } from "../support/wait-for.js";

const PASSWORD = "s3cret-Pa55word";

/** A config file that keeps the state in a temp dir (not in the repo). */
const configWithStateDir = (extra = ""): { file: string; stateDir: string } => {
  const dir = mkdtempSync(join(tmpdir(), "upholster-cli-couch-"));
  const stateDir = join(dir, "state");
  const file = join(dir, "upholster.ini");
  writeFileSync(file, `[upholster]\nport = 0\nstate_dir = ${stateDir}\n\n[couchdb]\npoll_interval_ms = 200\n${extra}`);
  return { file, stateDir };
};

const adminAuth = { Authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString("base64")}` };

let pouch: PouchDbServer;
let withCredentials: string;
beforeAll(async () => {
  pouch = await startPouchDbServer();
  // Out of admin party: an admin, so auth is real.
  const res = await fetch(`${pouch.url}/_config/admins/admin`, { method: "PUT", body: JSON.stringify(PASSWORD) });
  expect(res.ok).toBe(true);
  withCredentials = `http://admin:${PASSWORD}@127.0.0.1:${pouch.port}`;
}, 90_000);
afterAll(async () => {
  await pouch?.stop();
});
afterEach(killStarted);

describe("upholster run --couch", () => {
  it("maintains PouchDB Server: startup line without credentials, status shows polling and health, /_db_updates asks the server", async () => {
    const { file, stateDir } = configWithStateDir();
    const daemon = upholster(["run", "--config", file, "--couch", withCredentials, "--log-level", "debug"]);
    const url = await listeningUrl(daemon);
    await printed(daemon, `store: couchdb http://127.0.0.1:${pouch.port}/ (granularity database; events: polling)`);

    // Every route but / and /_up asks CouchDB (here PouchDB Server) whether the caller is a server admin.
    expect((await fetch(`${url}/_upholster/status`)).status).toBe(401);
    const status = (await (await fetch(`${url}/_upholster/status`, { headers: adminAuth })).json()) as { events: { mode: string }; subsystems: { couchdb: Record<string, unknown> } };
    expect(status.events.mode).toBe("polling");
    expect(status.subsystems.couchdb).toMatchObject({ server: `http://127.0.0.1:${pouch.port}/`, health: "reachable", events: "polling" });

    // The same HTTP status API as with the in-memory store.
    const table = upholster(["status", "--url", `http://admin:${PASSWORD}@${new URL(url).host}`]);
    expect(await table.exited).toBe(0);
    expect(table.stdout).toMatch(/^channel\s+active\s+starting\s+waiting\s+min\s+max$/m);

    // /_db_updates: PouchDB Server's own admin decides.
    expect((await fetch(`${url}/_db_updates`)).status).toBe(401);
    const feed = await fetch(`${url}/_db_updates`, { headers: adminAuth });
    expect(feed.status).toBe(200);

    // The feed position survives a restart: saved under state_dir.
    await waitFor(() => readdirSync(stateDir).length > 0, "a state file under state_dir");

    expect(daemon.stdout).toContain("sign in as a CouchDB user with the _admin role");
    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toBe(0);
    expect(daemon.stdout + daemon.stderr).not.toContain(PASSWORD);
  });

  it("COUCHDB_URL selects the server; --couch wins over it", async () => {
    const { file } = configWithStateDir();
    const fromEnv = upholster(["run", "--config", file, "--log-level", "warn"], { COUCHDB_URL: withCredentials });
    await listeningUrl(fromEnv);
    await printed(fromEnv, `store: couchdb http://127.0.0.1:${pouch.port}/`);
    fromEnv.child.kill("SIGINT");
    expect(await fromEnv.exited).toBe(0);

    // The flag's (invalid) URL is the one used: the env's is not even looked at.
    const flagWins = upholster(["run", "--config", file, "--couch", `ftp://admin:${PASSWORD}@127.0.0.1:1`], { COUCHDB_URL: withCredentials });
    expect(await flagWins.exited).toBe(2);
    expect(flagWins.stderr).toContain("[couchdb] url");
    expect(flagWins.stdout + flagWins.stderr).not.toContain(PASSWORD);
  });

  it("bad [couchdb] values exit 2 naming section, key and value, never the password", async () => {
    const { file } = configWithStateDir(`granularity = node\npoll_interval_ms = 0\nurl = admin:${PASSWORD}@localhost:5984\n`);
    const run = upholster(["run", "--config", file]);
    expect(await run.exited).toBe(2);
    expect(run.stderr).toContain('[couchdb] granularity = "node"');
    expect(run.stderr).toContain('[couchdb] poll_interval_ms = "0"');
    expect(run.stderr).toContain('[couchdb] url = "<redacted>@localhost:5984"');
    expect(run.stdout + run.stderr).not.toContain(PASSWORD);
  });

  it("a server that is down at start: upholster starts anyway and reports the outage, without credentials", async () => {
    // Admins cannot be asked while CouchDB is down: public_status keeps read-only status open for exactly this.
    const { file } = configWithStateDir("retries = 0\n[upholster]\npublic_status = true\n");
    const daemon = upholster(["run", "--config", file, "--couch", `http://admin:${PASSWORD}@127.0.0.1:1`, "--log-level", "info"]);
    const url = await listeningUrl(daemon);
    const status = await waitFor(async () => {
      const body = (await (await fetch(`${url}/_upholster/status`)).json()) as { subsystems: { couchdb: { health: string } } };
      return body.subsystems.couchdb.health === "outage" ? body : undefined;
    }, "the outage in status");
    expect(JSON.stringify(status)).not.toContain(PASSWORD);
    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toBe(0);
    expect(daemon.stdout + daemon.stderr).not.toContain(PASSWORD);
  });
});
