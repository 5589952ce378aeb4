/**
 * A bench's rows in child processes, a few at a time: rows that share
 * nothing (each builds its own store, workload and daemon from a seed) need
 * not wait for each other, so a run of three rows on two cores takes about
 * the time of two. Each child is this same script with one row to run; it
 * prints its result as one JSON line, and its stderr (traces, warnings) is
 * passed on whole, in row order, so the output reads as a sequential run's.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";

/** How a child says what its row measured: the one stdout line with this prefix. */
const RESULT_PREFIX = "ROW_RESULT ";

/**
 * How many rows run at once: `setting` (an env variable's text) when given,
 * else one per core, never more than the rows. Throws, naming `variable`,
 * on anything but a positive integer.
 */
export const rowProcesses = (variable: string, setting: string | undefined, rows: number): number => {
  if (setting === undefined || setting === "") return Math.max(1, Math.min(rows, availableParallelism()));
  const value = Number(setting);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${variable}: expected a positive integer, got ${JSON.stringify(setting)}`);
  return Math.min(rows, value);
};

/** In a child: hand the row's result to the parent. */
export const reportRow = (result: unknown): void => {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
};

interface ChildOutput {
  readonly stdout: string;
  readonly stderr: string;
}

const runChild = (env: NodeJS.ProcessEnv, running: Set<ChildProcess>): Promise<ChildOutput> =>
  new Promise((resolve, reject) => {
    // The same node, flags (tsx's loader, the young generation size) and script as this process.
    const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { env, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      running.delete(child);
      const output = { stdout: Buffer.concat(stdout).toString("utf8"), stderr: Buffer.concat(stderr).toString("utf8") };
      if (code === 0) resolve(output);
      else reject(new Error(`row process exited with ${signal ?? `code ${code}`}:\n${output.stderr.trim()}`));
    });
  });

const resultOf = <R>(row: string, output: ChildOutput): R => {
  const line = output.stdout.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
  if (line === undefined) throw new Error(`row ${row}: its process printed no result:\n${output.stdout.trim()}`);
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as R;
};

/**
 * Run every row in a child process (`envFor(row)` tells the child which),
 * at most `processes` at once. `onRow` sees each result in row order, as
 * soon as it and every row before it are done; the child's stderr is
 * written just before.
 */
export async function runRowsInProcesses<R>(
  rows: readonly string[],
  processes: number,
  envFor: (row: string) => NodeJS.ProcessEnv,
  onRow: (row: string, result: R) => void,
): Promise<R[]> {
  // One promise per row, settled by whichever of the `processes` runners takes it: a row starts as soon as any slot is free.
  const settle: Array<{ resolve: (output: ChildOutput) => void; reject: (error: unknown) => void }> = [];
  const outputs = rows.map(
    () =>
      new Promise<ChildOutput>((resolve, reject) => {
        settle.push({ resolve, reject });
      }),
  );
  // A failed row fails the run: the rows still running are stopped rather than left behind.
  const running = new Set<ChildProcess>();
  for (const output of outputs) output.catch(() => undefined);
  let next = 0;
  const runner = async (): Promise<void> => {
    while (next < rows.length) {
      const i = next++;
      await runChild(envFor(rows[i]!), running).then(settle[i]!.resolve, settle[i]!.reject);
    }
  };
  for (let slot = 0; slot < processes; slot++) void runner();
  const results: R[] = [];
  try {
    for (const [i, row] of rows.entries()) {
      const output = await outputs[i]!;
      if (output.stderr !== "") process.stderr.write(output.stderr);
      const result = resultOf<R>(row, output);
      results.push(result);
      onRow(row, result);
    }
  } catch (error) {
    next = rows.length;
    for (const child of running) child.kill();
    throw error;
  }
  return results;
}
