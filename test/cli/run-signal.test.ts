/**
 * `upholster run` listens for its stop signal before it prints that it is
 * up. A supervisor (or a test) that signals as soon as it reads the
 * listening line must get a clean stop: a SIGINT that comes before the
 * process listens for it kills the process where it stands. Seen here: one
 * run in twelve, with both cores busy, died of SIGINT half-way through its
 * startup lines.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runCommand } from "../../src/cli/run.js";
import { waitFor } from "../support/wait-for.js";

it("run: the stop signal is listened for before the first line says upholster is up, and it stops cleanly on it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "upholster-run-signal-"));
  const file = join(dir, "upholster.ini");
  writeFileSync(file, `[upholster]\nport = 0\ndemo = false\nlog_level = error\nstate_dir = ${join(dir, "state")}\n`);
  const happened: string[] = [];
  let stop: ((signal: string) => void) | undefined;
  const untilStopped = (): Promise<string> => {
    happened.push("listening for the signal");
    return new Promise((resolve) => (stop = resolve));
  };
  const terminal = { out: (line: string) => happened.push(line), err: (line: string) => happened.push(`err: ${line}`) };
  const exit = runCommand({ config: file }, terminal, untilStopped, {});
  const listeningLine = await waitFor(() => {
    const index = happened.findIndex((line) => line.startsWith("upholster listening on"));
    return index >= 0 ? index : undefined;
  }, "the listening line");
  expect(happened.indexOf("listening for the signal")).toBeGreaterThanOrEqual(0);
  expect(happened.indexOf("listening for the signal")).toBeLessThan(listeningLine);
  stop!("SIGINT");
  expect(await exit).toBe(0);
});
