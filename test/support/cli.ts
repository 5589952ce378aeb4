/**
 * The CLI as a user runs it: `upholster ...` spawned as its own process
 * (through tsx, on the sources), its output collected, killed after each test.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "./wait-for.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MAIN = join(ROOT, "src/cli/main.ts");

export interface Running {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

const started: Running[] = [];

/** Spawn `upholster <args>`; `COUCHDB_URL` from the test's own environment is never inherited, `env` is added. */
export function upholster(args: readonly string[], env: Record<string, string> = {}): Running {
  const { COUCHDB_URL: _inherited, ...base } = process.env;
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const running: Running = { child, stdout: "", stderr: "", exited: new Promise((resolve) => child.on("exit", (code) => resolve(code))) };
  child.stdout!.on("data", (chunk: Buffer) => (running.stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (running.stderr += chunk.toString()));
  started.push(running);
  return running;
}

/** The URL from `upholster listening on http://...`. */
export const listeningUrl = (run: Running, timeoutMs = 60_000): Promise<string> =>
  waitFor(() => /upholster listening on (http:\/\/\S+)/.exec(run.stdout)?.[1], `the listening line (stdout: ${run.stdout}; stderr: ${run.stderr})`, timeoutMs, 50);

/**
 * Waits until `run` has printed `text` on stdout. Lines written one after the
 * other can arrive in separate chunks, so a line after the listening line is
 * waited for, not expected at once (a busy machine split them here).
 */
export const printed = async (run: Running, text: string, timeoutMs = 30_000): Promise<true> => {
  try {
    return await waitFor(() => run.stdout.includes(text) || undefined, `${JSON.stringify(text)} on stdout`, timeoutMs, 50);
  } catch (error) {
    // The output as it is when the wait gives up, not as it was when it began.
    throw new Error(`${error instanceof Error ? error.message : String(error)} (stdout: ${run.stdout}; stderr: ${run.stderr})`);
  }
};

/** For afterEach: kill whatever is still running. */
export const killStarted = (): void => {
  for (const run of started.splice(0)) if (run.child.exitCode === null) run.child.kill("SIGKILL");
};
