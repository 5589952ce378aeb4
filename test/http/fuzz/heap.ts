/**
 * Heap in use after a full collection. Without `--expose-gc` the flag is set
 * at run time and `gc` taken from a fresh context, as V8 allows.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const collect = (): (() => void) => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed !== undefined) return exposed;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
};

export async function heapUsedAfterGc(): Promise<number> {
  const gc = collect();
  // A few passes with a turn between: finalizers and weak callbacks free more on later passes.
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}
