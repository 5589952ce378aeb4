/**
 * A private, throwaway PostgreSQL 15 + PostGIS 3 cluster for the geo oracle
 * tests and the geo benchmark: `initdb` into a temp dir, `pg_ctl start` on a
 * free loopback port with the unix socket in that dir, `CREATE EXTENSION
 * postgis`, and on `stop()` an immediate shutdown and the dir removed.
 *
 * PostgreSQL refuses to run as root, and CI runs as root, so as uid 0 every
 * server command runs as the `postgres` user (`runuser -u postgres --`) on a
 * temp dir chowned to it. Missing binaries are an error naming the Debian
 * package (postgresql-15-postgis-3), never a silent skip.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export const POSTGRES_BIN_DIR = "/usr/lib/postgresql/15/bin";
const POSTGIS_CONTROL_FILE = "/usr/share/postgresql/15/extension/postgis.control";
const INSTALL_HINT = "install it with: apt-get install -y postgresql-15-postgis-3 (CI's .ci/run does)";

export interface PostgisCluster {
  readonly port: number;
  readonly dir: string;
  /** A connected client on the `postgres` database, PostGIS created. */
  readonly client: pg.Client;
  /** Another connection (for parallel loading or a second session). */
  connect(): Promise<pg.Client>;
  stop(): Promise<void>;
}

/** Throws (with the package to install) unless PostgreSQL 15 and PostGIS 3 are installed. */
export function assertPostgisInstalled(): void {
  for (const tool of ["initdb", "pg_ctl", "postgres"]) {
    const path = join(POSTGRES_BIN_DIR, tool);
    if (!existsSync(path)) throw new Error(`PostGIS oracle: ${path} is missing; ${INSTALL_HINT}`);
  }
  if (!existsSync(POSTGIS_CONTROL_FILE)) throw new Error(`PostGIS oracle: ${POSTGIS_CONTROL_FILE} is missing; ${INSTALL_HINT}`);
}

const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });

const runningAsRoot = (): boolean => process.getuid?.() === 0;

/** Runs a PostgreSQL tool, as `postgres` when we are root. */
function runPostgresTool(tool: string, args: readonly string[]): void {
  const binary = join(POSTGRES_BIN_DIR, tool);
  const [command, commandArgs] = runningAsRoot()
    ? ["runuser", ["-u", "postgres", "--", binary, ...args]]
    : [binary, [...args]];
  execFileSync(command, commandArgs, { stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
}

function makeClusterDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "upholster-postgis-"));
  if (runningAsRoot()) execFileSync("chown", ["-R", "postgres:postgres", dir]);
  return dir;
}

/** Settings for a disposable cluster: durability off, a little more memory for sorts and the GiST build. */
const SERVER_OPTIONS = [
  "-c listen_addresses=127.0.0.1",
  "-c fsync=off",
  "-c synchronous_commit=off",
  "-c full_page_writes=off",
  "-c max_connections=20",
  "-c shared_buffers=256MB",
  "-c work_mem=64MB",
  "-c maintenance_work_mem=256MB",
  "-c jit=off",
];

export async function startPostgis(): Promise<PostgisCluster> {
  assertPostgisInstalled();
  const dir = makeClusterDir();
  const dataDir = join(dir, "data");
  const logFile = join(dir, "server.log");
  const port = await freePort();
  const stopServer = (): void => {
    spawnSync(runningAsRoot() ? "runuser" : join(POSTGRES_BIN_DIR, "pg_ctl"), [
      ...(runningAsRoot() ? ["-u", "postgres", "--", join(POSTGRES_BIN_DIR, "pg_ctl")] : []),
      "stop", "-D", dataDir, "-m", "immediate", "-w",
    ], { stdio: "ignore", timeout: 60_000 });
    rmSync(dir, { recursive: true, force: true });
  };
  // A crashed test run must not leave a server behind.
  process.once("exit", stopServer);
  try {
    runPostgresTool("initdb", ["-D", dataDir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"]);
    writeFileSync(join(dir, ".keep"), "");
    runPostgresTool("pg_ctl", ["start", "-D", dataDir, "-w", "-t", "60", "-l", logFile, "-o", [`-p ${port}`, `-k ${dir}`, ...SERVER_OPTIONS].join(" ")]);
  } catch (error) {
    const log = existsSync(logFile) ? readFileSync(logFile, "utf8").slice(-2000) : "";
    stopServer();
    process.removeListener("exit", stopServer);
    throw new Error(`could not start the private PostgreSQL cluster: ${(error as Error).message}\n${log}`);
  }
  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
    await client.connect();
    return client;
  };
  const clients: pg.Client[] = [];
  const client = await connect();
  clients.push(client);
  await client.query("CREATE EXTENSION IF NOT EXISTS postgis");
  return {
    port,
    dir,
    client,
    connect: async () => {
      const extra = await connect();
      clients.push(extra);
      return extra;
    },
    stop: async () => {
      await Promise.allSettled(clients.map((c) => c.end()));
      stopServer();
      process.removeListener("exit", stopServer);
    },
  };
}
