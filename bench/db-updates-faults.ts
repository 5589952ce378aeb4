/**
 * `npm run bench:db-updates-faults`: events lost across faults (issue #7, section 2).
 *
 * Against a real CouchDB (COUCHDB_URL), a client follows upholster's
 * continuous `/_db_updates` (reconnecting from its last seq, as clients do)
 * while BENCH_DBS dbs are created and BENCH_DELETES of them deleted over about
 * BENCH_SECONDS. CouchDB is restarted once (COUCHDB_RESTART_CMD, run right after
 * a db was created: CouchDB's global_changes holds that event in memory for up
 * to 500 ms and drops it on restart), and upholster is killed with SIGKILL and
 * started again once. A second client follows CouchDB's own `/_db_updates` the
 * same way, as the baseline. Prints, per run and in total, the created and
 * deleted events each client never saw (and updated ones, for information).
 *
 * upholster runs as a process, `node <UPHOLSTER_MAIN> run --couch ... --no-demo`,
 * on a free port with its own state dir (default UPHOLSTER_MAIN: this repo's
 * dist/cli/main.js: run `npm run build` first).
 *
 * Env: COUCHDB_URL (required), COUCHDB_RESTART_CMD (e.g. "/work/couchdb/stop.sh && /work/couchdb/start.sh";
 * without it CouchDB is not restarted), UPHOLSTER_MAIN, BENCH_RUNS (1), BENCH_DBS (60),
 * BENCH_DELETES (20), BENCH_SECONDS (40), BENCH_SETTLE_SECONDS (30).
 * Self-contained (node builtins only), so it also measures older builds.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const COUCHDB_URL = process.env.COUCHDB_URL;
const RESTART_CMD = process.env.COUCHDB_RESTART_CMD;
const MAIN = resolve(process.env.UPHOLSTER_MAIN ?? join(fileURLToPath(new URL("..", import.meta.url)), "dist/cli/main.js"));
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const DBS = Number(process.env.BENCH_DBS ?? 60);
const DELETES = Math.min(Number(process.env.BENCH_DELETES ?? 20), DBS);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 40);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_SECONDS ?? 30) * 1000;

interface Endpoint {
  readonly base: string;
  readonly auth: string | undefined;
}

const endpointOf = (raw: string): Endpoint => {
  const url = new URL(raw);
  const auth = url.username === "" ? undefined : `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`;
  url.username = "";
  url.password = "";
  return { base: url.toString().replace(/\/$/, ""), auth };
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// --- HTTP ----------------------------------------------------------------------

interface Reply {
  readonly status: number;
  readonly body: string;
}

const call = (ep: Endpoint, method: string, path: string, body?: unknown): Promise<Reply> =>
  new Promise((resolveReply, reject) => {
    const url = new URL(ep.base + path);
    const req = httpRequest(
      url,
      {
        method,
        headers: { ...(ep.auth === undefined ? {} : { authorization: ep.auth }), ...(body === undefined ? {} : { "content-type": "application/json" }) },
        timeout: 10_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolveReply({ status: res.statusCode ?? 0, body: text }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });

/** Retry until the server gives one of `ok` (CouchDB may be restarting). */
const callUntil = async (ep: Endpoint, method: string, path: string, ok: readonly number[], body?: unknown): Promise<void> => {
  for (let attempt = 0; attempt < 600; attempt++) {
    try {
      const reply = await call(ep, method, path, body);
      if (ok.includes(reply.status)) return;
    } catch {
      // connection refused or reset: the server is restarting
    }
    await sleep(200);
  }
  throw new Error(`${method} ${path} never succeeded`);
};

// --- a feed follower, as a client writes one -------------------------------------

interface Row {
  readonly db_name: string;
  readonly type: string;
  readonly seq: string;
}

class Follower {
  readonly rows: Row[] = [];
  connects = 0;
  private since = "now";
  private stopped = false;
  private current: IncomingMessage | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    readonly label: string,
    private readonly endpoint: () => Endpoint,
    private readonly prefix: string,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.destroy();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.follow().catch(() => undefined);
      if (!this.stopped) await sleep(250);
    }
  }

  /** One connection: rows until it ends or breaks; the seq of each row is remembered for the next `since`. */
  private follow(): Promise<void> {
    const ep = this.endpoint();
    const path = `/_db_updates?feed=continuous&heartbeat=1000&timeout=600000&since=${encodeURIComponent(this.since)}`;
    return new Promise((done, fail) => {
      const req = httpRequest(new URL(ep.base + path), { headers: ep.auth === undefined ? {} : { authorization: ep.auth } }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          res.on("end", () => done());
          return;
        }
        this.current = res;
        this.connects++;
        let buffer = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buffer += chunk;
          const lines = buffer.split("\n");
          buffer = lines.pop() ?? "";
          for (const line of lines) this.line(line);
        });
        res.on("end", () => done());
        res.on("error", fail);
        res.on("close", () => done());
      });
      req.setTimeout(5_000, () => req.destroy(new Error("no heartbeat")));
      req.on("error", fail);
      req.end();
    });
  }

  private line(line: string): void {
    if (line.trim() === "") return;
    const parsed = JSON.parse(line) as Partial<Row> & { last_seq?: unknown };
    if (typeof parsed.seq === "string" || typeof parsed.seq === "number") this.since = String(parsed.seq);
    else if (typeof parsed.last_seq === "string") this.since = parsed.last_seq;
    if (typeof parsed.db_name === "string" && typeof parsed.type === "string" && parsed.db_name.startsWith(this.prefix)) {
      this.rows.push({ db_name: parsed.db_name, type: parsed.type, seq: String(parsed.seq) });
    }
  }

  saw(type: string, db: string): boolean {
    return this.rows.some((r) => r.type === type && r.db_name === db);
  }
}

// --- upholster as a process ------------------------------------------------------------

const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });

class UpholsterProcess {
  private child: ChildProcess | undefined;
  log = "";

  constructor(
    private readonly port: number,
    private readonly configPath: string,
  ) {}

  async start(): Promise<void> {
    const { COUCHDB_URL: _omitted, ...env } = process.env;
    const child = spawn(process.execPath, [MAIN, "run", "--couch", COUCHDB_URL ?? "", "--no-demo", "--port", String(this.port), "--config", this.configPath], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    child.stdout?.on("data", (c: Buffer) => (this.log = (this.log + c.toString()).slice(-20_000)));
    child.stderr?.on("data", (c: Buffer) => (this.log = (this.log + c.toString()).slice(-20_000)));
    const ep = this.endpoint();
    for (let i = 0; i < 600; i++) {
      try {
        const status = JSON.parse((await call(ep, "GET", "/_upholster/status")).body) as { events?: { connected?: boolean } };
        if (status.events?.connected === true) return;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null) throw new Error(`upholster exited: ${this.log}`);
      await sleep(100);
    }
    throw new Error(`upholster did not connect to CouchDB: ${this.log}`);
  }

  kill(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((done) => {
      child.once("exit", () => done());
      child.kill(signal);
    });
  }

  endpoint(): Endpoint {
    return { base: `http://127.0.0.1:${this.port}`, auth: endpointOf(COUCHDB_URL ?? "").auth };
  }
}

const runShell = (command: string): Promise<void> =>
  new Promise((done, fail) => {
    const child = spawn("sh", ["-c", command], { stdio: ["ignore", "ignore", "inherit"] });
    child.on("exit", (code) => (code === 0 ? done() : fail(new Error(`${command} exited ${code}`))));
  });

// --- one run ---------------------------------------------------------------------------------

interface Lost {
  readonly created: string[];
  readonly deleted: string[];
  readonly updated: string[];
}

interface RunResult {
  readonly couch: Lost;
  readonly upholster: Lost;
  readonly createdBeforeRestart: string | undefined;
  readonly upholsterConnects: number;
}

type Op = { readonly kind: "create"; readonly db: string } | { readonly kind: "delete"; readonly db: string };

/** Creates in order; every third created db is deleted two creations later, until DELETES are scheduled. */
const planOps = (prefix: string): Op[] => {
  const ops: Op[] = [];
  const names = Array.from({ length: DBS }, (_, i) => `${prefix}${String(i).padStart(3, "0")}`);
  let deletes = 0;
  names.forEach((db, i) => {
    ops.push({ kind: "create", db });
    const victim = names[i - 2];
    if (i % 3 === 2 && victim !== undefined && deletes < DELETES) {
      ops.push({ kind: "delete", db: victim });
      deletes++;
    }
  });
  for (let i = 0; deletes < DELETES && i < DBS; i++) {
    const db = names[i] ?? "";
    if (!ops.some((o) => o.kind === "delete" && o.db === db)) {
      ops.push({ kind: "delete", db });
      deletes++;
    }
  }
  return ops;
};

const lostOf = (follower: Follower, created: readonly string[], deleted: readonly string[]): Lost => ({
  created: created.filter((db) => !follower.saw("created", db)),
  deleted: deleted.filter((db) => !follower.saw("deleted", db)),
  updated: created.filter((db) => !follower.saw("updated", db)),
});

async function oneRun(run: number): Promise<RunResult> {
  const couch = endpointOf(COUCHDB_URL ?? "");
  const prefix = `faults-${Date.now().toString(36)}-`;
  const stateDir = mkdtempSync(join(tmpdir(), "upholster-faults-"));
  const configPath = join(stateDir, "upholster.ini");
  writeFileSync(configPath, `[upholster]\nstate_dir = ${join(stateDir, "state")}\nlog_level = warn\n`);
  const upholster = new UpholsterProcess(await freePort(), configPath);
  await upholster.start();

  const couchFollower = new Follower("CouchDB /_db_updates", () => couch, prefix);
  const upholsterFollower = new Follower("upholster /_db_updates", () => upholster.endpoint(), prefix);
  couchFollower.start();
  upholsterFollower.start();
  while (couchFollower.connects === 0 || upholsterFollower.connects === 0) await sleep(50);

  const ops = planOps(prefix);
  const gapMs = (SECONDS * 1000) / ops.length;
  const restartAt = Math.floor(ops.length / 3);
  const killAt = Math.floor((2 * ops.length) / 3);
  let createdBeforeRestart: string | undefined;
  let upholsterRestart: Promise<void> = Promise.resolve();
  const started = Date.now();
  for (const [i, op] of ops.entries()) {
    const dueMs = started + i * gapMs;
    if (Date.now() < dueMs) await sleep(dueMs - Date.now());
    if (op.kind === "create") {
      await callUntil(couch, "PUT", `/${op.db}`, [201, 202, 412]);
      await callUntil(couch, "PUT", `/${op.db}/doc`, [201, 202, 409], { at: Date.now() });
    } else {
      await callUntil(couch, "DELETE", `/${op.db}`, [200, 202, 404]);
    }
    if (i === restartAt && RESTART_CMD !== undefined && op.kind === "create") {
      createdBeforeRestart = op.db;
      process.stdout.write(`  run ${run}: restarting CouchDB right after creating ${op.db}\n`);
      await runShell(RESTART_CMD);
    }
    if (i === killAt) {
      process.stdout.write(`  run ${run}: kill -9 upholster, then start it again (op ${i} of ${ops.length})\n`);
      await upholster.kill("SIGKILL");
      upholsterRestart = upholster.start();
    }
  }
  await upholsterRestart;

  const created = ops.filter((o) => o.kind === "create").map((o) => o.db);
  const deleted = ops.filter((o) => o.kind === "delete").map((o) => o.db);
  const settleUntil = Date.now() + SETTLE_MS;
  const complete = (f: Follower): boolean => {
    const lost = lostOf(f, created, deleted);
    return lost.created.length + lost.deleted.length + lost.updated.length === 0;
  };
  while (Date.now() < settleUntil && !(complete(upholsterFollower) && complete(couchFollower))) await sleep(250);

  const result: RunResult = {
    couch: lostOf(couchFollower, created, deleted),
    upholster: lostOf(upholsterFollower, created, deleted),
    createdBeforeRestart,
    upholsterConnects: upholsterFollower.connects,
  };
  await couchFollower.stop();
  await upholsterFollower.stop();
  await upholster.kill("SIGTERM");
  for (const db of created) if (!deleted.includes(db)) await callUntil(couch, "DELETE", `/${db}`, [200, 202, 404]);
  rmSync(stateDir, { recursive: true, force: true });
  return result;
}

// --- report ------------------------------------------------------------------------------------

const describe = (lost: Lost): string => {
  const names = [...lost.created.map((d) => `created ${d}`), ...lost.deleted.map((d) => `deleted ${d}`)];
  return `${String(lost.created.length).padStart(13)}${String(lost.deleted.length).padStart(13)}${String(lost.updated.length).padStart(13)}   ${names.join(", ")}`;
};

async function main(): Promise<void> {
  if (COUCHDB_URL === undefined) {
    console.log("bench:db-updates-faults: set COUCHDB_URL (and COUCHDB_RESTART_CMD) to run it; skipped.");
    return;
  }
  if (RESTART_CMD === undefined) console.log("COUCHDB_RESTART_CMD is not set: CouchDB will not be restarted.");
  console.log(`upholster: ${MAIN}; ${RUNS} run(s) of ${DBS} created and ${DELETES} deleted dbs over ${SECONDS} s\n`);
  const totals = { couch: { created: 0, deleted: 0, updated: 0 }, upholster: { created: 0, deleted: 0, updated: 0 } };
  for (let run = 1; run <= RUNS; run++) {
    const r = await oneRun(run);
    console.log(`run ${run} (upholster's client connected ${r.upholsterConnects} times)`);
    console.log(`  ${"feed".padEnd(24)}lost created lost deleted lost updated`);
    console.log(`  ${"CouchDB /_db_updates".padEnd(24)}${describe(r.couch)}`);
    console.log(`  ${"upholster /_db_updates".padEnd(24)}${describe(r.upholster)}`);
    for (const key of ["couch", "upholster"] as const) {
      totals[key].created += r[key].created.length;
      totals[key].deleted += r[key].deleted.length;
      totals[key].updated += r[key].updated.length;
    }
  }
  const expected = RUNS * (DBS + DELETES);
  console.log(`\ntotal over ${RUNS} run(s), ${expected} created+deleted events expected per feed:`);
  console.log(`  CouchDB /_db_updates:   ${totals.couch.created + totals.couch.deleted} lost (${totals.couch.created} created, ${totals.couch.deleted} deleted; ${totals.couch.updated} updated)`);
  console.log(`  upholster /_db_updates: ${totals.upholster.created + totals.upholster.deleted} lost (${totals.upholster.created} created, ${totals.upholster.deleted} deleted; ${totals.upholster.updated} updated)`);
}

await main();
