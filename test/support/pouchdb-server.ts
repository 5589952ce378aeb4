/**
 * Start the real PouchDB Server (node_modules/.bin/pouchdb-server, a dev
 * dependency) on a free loopback port in a temp dir, on-disk (LevelDB), and
 * kill it after. Flags verified with `pouchdb-server --help` (4.2.0):
 * `-n` = no stdout logs, `-p` port, `-d` db dir, `-c` config file, `-o` host.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { waitFor } from "./wait-for.js";

export interface PouchDbServer {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  stop(): Promise<void>;
}

export const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolvePort(port));
    });
  });

export const startPouchDbServer = async (): Promise<PouchDbServer> => {
  const dir = mkdtempSync(join(tmpdir(), "upholster-pouchdb-"));
  const port = await freePort();
  const bin = resolve(import.meta.dirname, "../../node_modules/.bin/pouchdb-server");
  const child: ChildProcess = spawn(bin, ["-n", "-p", String(port), "-o", "127.0.0.1", "-d", dir, "-c", join(dir, "config.json")], {
    cwd: dir,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`pouchdb-server exited ${child.exitCode}: ${stderr}`);
        const res = await fetch(`${url}/`);
        return res.ok;
      },
      "pouchdb-server to answer",
      60_000,
      100,
    );
  } catch (e) {
    child.kill("SIGKILL");
    throw e;
  }
  return {
    url,
    port,
    dir,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
