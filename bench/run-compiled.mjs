/**
 * Runs a bench on JavaScript compiled the way the package ships (`dist/` is
 * plain `tsc` output), not through tsx: tsx compiles with esbuild's
 * `keepNames`, which wraps every named closure in a `__name(fn, "...")` call
 * each time it is made. The view passes make several such closures per
 * document, and a full-day bench:simulate ran about 15% slower under tsx
 * than the same code as shipped (docs/benchmarks.md, "The bench runs the
 * code as shipped"), so a row's "x real time" understated the product.
 *
 *   node bench/run-compiled.mjs bench/simulate.ts [args...]
 *
 * Every .ts file under src/ and bench/ is compiled file by file (no bundle:
 * paths relative to a module stay right) into .bench-build/, in about 0.1 s,
 * and the bench runs there with this process's flags, environment and
 * stdio. Type errors are the typecheck's business (`npm run typecheck`).
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OUT_DIR = join(ROOT, ".bench-build");

const [entry, ...args] = process.argv.slice(2);
if (entry === undefined || !entry.endsWith(".ts")) {
  console.error("usage: node bench/run-compiled.mjs bench/<name>.ts [args...]");
  process.exit(2);
}

const sourcesUnder = (dir) =>
  readdirSync(join(ROOT, dir), { recursive: true })
    .filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))
    .map((path) => join(ROOT, dir, path));

buildSync({
  entryPoints: [...sourcesUnder("src"), ...sourcesUnder("bench")],
  outdir: OUT_DIR,
  outbase: ROOT,
  format: "esm",
  platform: "node",
  target: `node${process.versions.node}`,
  logLevel: "warning",
});

const compiled = join(OUT_DIR, relative(ROOT, join(process.cwd(), entry))).replace(/\.ts$/, ".js");
const run = spawnSync(process.execPath, [...process.execArgv, compiled, ...args], { stdio: "inherit" });
process.exit(run.status ?? 1);
