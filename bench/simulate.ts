/**
 * bench:simulate — a simulated day of churn over many databases on the
 * in-memory store, under three policies, in the same run:
 *
 *   upholster      the compaction daemon with CouchDB 3.4's default channels
 *   never          no compaction at all (the disk only grows)
 *   every-write    PouchDB's auto_compaction: compact a db after every write
 *                  (a write during a compaction queues one more run)
 *
 * Every policy sees the same seeded workload on a virtual clock, so the runs
 * are comparable. Printed: total disk (db + view files) sampled every
 * simulated minute (peak and mean), bytes reclaimed, compactions run.
 *
 *   npm run bench:simulate                      # 1,000 dbs, 2 h: about 10 s on the 2-core machine
 *   SIM_FULL_DAY=1 SIM_POLICIES=never,upholster npm run bench:simulate   # 10,000 dbs, 24 h: about 1 minute here
 *   SIM_PARALLEL=1 npm run bench:simulate       # the rows one after another (default: one process per core)
 *   SIM_DBS=2000 SIM_HOURS=6 npm run bench:simulate
 *   SIM_POLICIES=upholster SIM_FULL_DAY=1 npm run bench:simulate   # one row: the simulator's speed
 *   SIM_SANDBOX=quickjs npm run bench:simulate   # the workload's maps in the QuickJS sandbox (default: node-vm, same rows)
 *   SIM_CONFIG=tuned.ini npm run bench:simulate   # a "tuned" row on your INI beside the defaults' row, and their ratios
 *   SIM_JOB_ENDS=looks npm run bench:simulate    # the daemon's rows see db compaction ends as on CouchDB (below)
 *
 * Each row also prints its speed: simulated time over wall time ("x real
 * time"), the memory store and the workload included. `npm run` runs it
 * compiled as the package ships (bench/run-compiled.mjs says why; `npx tsx
 * bench/simulate.ts` works too, about 10% slower). The bench runs itself
 * with a larger young generation (SIM_SEMI_SPACE_MB, below), and its rows
 * side by side in child processes (SIM_PARALLEL, below).
 */
import { spawnSync } from "node:child_process";
import { defaultSmooshConfig } from "../src/core/compaction/index.js";
import { createMemoryStore, type MemoryStore } from "../src/adapters/memory/index.js";
import { createWorkload } from "../src/adapters/memory/workload.js";
import { VirtualScheduler } from "../src/runtime/scheduler.js";
import { createSandboxFactory } from "../src/adapters/sandbox/index.js";
import { createCompactionDaemon } from "../src/runtime/compaction/daemon.js";
import { silentLogger } from "../src/adapters/logging/index.js";
import { configWarningLines, loadBenchConfig } from "./config-file.js";
import { reportRow, rowProcesses, runRowsInProcesses } from "./row-processes.js";
import { defaultCouchSettings } from "../src/config/couchdb-section.js";

/**
 * V8's young generation, MiB per semi-space. A simulated write leaves objects
 * that live for seconds of wall time (documents, revisions, view rows, the
 * event log), and the default (16 MiB) promoted many of them just before they
 * died, for the old generation to mark: 64 measured ~10% less CPU for both
 * rows. 128 halves the scavenges again: in six alternated pairs of
 * upholster rows (full day and 6 h) every one was faster at 128, by 0.2-9.6%
 * (about 5% typical); the never row and the short run were within the noise;
 * about 110 MB more resident (docs/benchmarks.md). Node takes it only at
 * startup, so the bench starts itself again with it (SIM_SEMI_SPACE_MB=0: as
 * started). Outputs are the same either way.
 */
const SEMI_SPACE_MB = Number(process.env.SIM_SEMI_SPACE_MB ?? 128);
const SEMI_SPACE_FLAG = "--max-semi-space-size";
if (SEMI_SPACE_MB > 0 && !process.execArgv.some((arg) => arg.startsWith(SEMI_SPACE_FLAG))) {
  const child = spawnSync(process.execPath, [...process.execArgv, `${SEMI_SPACE_FLAG}=${SEMI_SPACE_MB}`, ...process.argv.slice(1)], { stdio: "inherit" });
  process.exit(child.status ?? 1);
}

/** The full simulated day takes minutes of wall time; the default is a short run that still shows the ratios. */
const FULL_DAY = process.env.SIM_FULL_DAY === "1";
const DB_COUNT = Number(process.env.SIM_DBS ?? (FULL_DAY ? 10_000 : 1_000));
const HOURS = Number(process.env.SIM_HOURS ?? (FULL_DAY ? 24 : 2));
const WRITES_PER_SECOND = Number(process.env.SIM_WRITES_PER_SECOND ?? 20);
const SEED = Number(process.env.SIM_SEED ?? 7);
const STEP_MS = 1_000;
/**
 * SIM_CONFIG: a CouchDB-style INI (what `upholster run --config` reads) for
 * the "tuned" row: the daemon on its `[smoosh]` sections, beside the
 * defaults' "upholster" row on the same workload, so a tuning is proven here
 * before production. Decoded whole first: a bad file names every bad field.
 */
const TUNED = loadBenchConfig("SIM_CONFIG", process.env.SIM_CONFIG);
const POLICIES = (process.env.SIM_POLICIES ?? (TUNED === undefined ? "never,upholster,every-write" : "never,upholster,tuned")).split(",").map((p) => p.trim()) as Policy[];
for (const policy of POLICIES) {
  if (!["never", "upholster", "tuned", "every-write"].includes(policy)) throw new Error(`SIM_POLICIES: unknown policy ${JSON.stringify(policy)}`);
  if (policy === "tuned" && TUNED === undefined) throw new Error("SIM_POLICIES: the tuned row needs SIM_CONFIG=file.ini");
}
const SAMPLE_EVERY_MS = 60_000;
const SETTLE_ROUNDS = Number(process.env.SIM_SETTLE_ROUNDS ?? 1);
/**
 * The engine that runs the workload's map functions: "node-vm" (default), V8
 * in this thread, for functions we wrote ourselves; "quickjs", the sandbox
 * user design docs get. Same rows either way, so the same results; the
 * sandbox made the upholster row about 15% slower (src/adapters/sandbox/node-vm-engine.ts).
 */
const SANDBOX_ENGINE = ((engine: string): "node-vm" | "quickjs" => {
  if (engine === "node-vm" || engine === "quickjs") return engine;
  throw new Error(`SIM_SANDBOX: expected node-vm or quickjs, got ${JSON.stringify(engine)}`);
})(process.env.SIM_SANDBOX ?? "node-vm");
/**
 * SIM_JOB_ENDS: how the daemon's rows (upholster, tuned) see a db
 * compaction end. "events" (default): at once, as the memory store reports
 * it. "looks": as on CouchDB, only in an info read after it, the daemon
 * looking every `[couchdb] job_poll_interval_ms` (1 s, or the tuned INI's)
 * (src/adapters/memory/unannounced-ends.ts): what a CouchDB tuning of
 * `concurrency` or that interval does is then priced as CouchDB will.
 */
const JOB_ENDS = ((ends: string): "events" | "looks" => {
  if (ends === "events" || ends === "looks") return ends;
  throw new Error(`SIM_JOB_ENDS: expected events or looks, got ${JSON.stringify(ends)}`);
})(process.env.SIM_JOB_ENDS ?? "events");
/** The look interval of a daemon row with SIM_JOB_ENDS=looks: the tuned INI's `[couchdb] job_poll_interval_ms`, else its default (`defaultCouchSettings`). */
const lookIntervalMsFor = (policy: Policy): number | undefined => {
  if (JOB_ENDS !== "looks" || (policy !== "upholster" && policy !== "tuned")) return undefined;
  return policy === "tuned" && TUNED !== undefined ? TUNED.config.couchdb.jobPollIntervalMs : defaultCouchSettings.jobPollIntervalMs;
};
/** SIM_TRACE=1: one line per sample on stderr (store totals, compactions), to diff two runs of a seed. */
const TRACE = process.env.SIM_TRACE === "1";
/**
 * SIM_PARALLEL: how many rows run at once, each in its own process (default:
 * one per core). The rows share nothing, so their results are the same
 * either way; a row's own speed ("x real time") is best read alone
 * (SIM_PARALLEL=1, or one policy), as rows side by side share the memory bus.
 */
const ROW_PROCESSES = rowProcesses("SIM_PARALLEL", process.env.SIM_PARALLEL, POLICIES.length);
/** Set by the parent in a row's process: run that one row and report it. */
const IS_ROW_PROCESS = process.env.SIM_ROW_PROCESS === "1";

type Policy = "upholster" | "tuned" | "never" | "every-write";

interface Result {
  readonly policy: Policy;
  readonly peakBytes: number;
  readonly meanBytes: number;
  readonly finalBytes: number;
  readonly liveBytes: number;
  readonly reclaimedBytes: number;
  readonly compactions: number;
  readonly wallMs: number;
  /** CPU time of this process during the row (user + system), ms: comparable when other work shares the machine. */
  readonly cpuMs: number;
}

const totalFile = (store: MemoryStore): number => {
  const t = store.totals();
  return t.dbFileBytes + t.viewFileBytes;
};
const totalActive = (store: MemoryStore): number => {
  const t = store.totals();
  return t.dbActiveBytes + t.viewActiveBytes;
};

/** PouchDB's auto_compaction: after each write, compact; writes during a run queue one more. */
function compactAfterEveryWrite(store: MemoryStore): { stats(): { compactions: number; reclaimedBytes: number } } {
  const running = new Set<string>();
  const dirty = new Set<string>();
  let compactions = 0;
  let reclaimedBytes = 0;
  const run = (db: string): void => {
    running.add(db);
    compactions++;
    store
      .startJob({ kind: "db", db })
      .then((handle) => handle.done)
      .then((outcome) => {
        if (outcome.ok) reclaimedBytes += outcome.reclaimedBytes ?? 0;
      })
      .catch(() => undefined)
      .finally(() => {
        running.delete(db);
        if (dirty.delete(db) && store.dbExists(db)) run(db);
      });
  };
  void store.createEventSource().start((event) => {
    if (event.type !== "db-updated") return;
    if (running.has(event.db)) dirty.add(event.db);
    else run(event.db);
  });
  return { stats: () => ({ compactions, reclaimedBytes }) };
}

async function simulate(policy: Policy): Promise<Result> {
  const started = process.hrtime.bigint();
  const cpuStarted = process.cpuUsage();
  const scheduler = new VirtualScheduler({ startMs: Date.UTC(2026, 10, 21, 0, 0, 0) });
  // Views built 5 s after writes (the store's default used to be so), map functions in this thread (deterministic).
  const sandbox = createSandboxFactory({ thread: "main", engine: SANDBOX_ENGINE });
  // Its engine loads by wall-clock I/O: loaded while the clock still moved, it made the first builds
  // wait a load-dependent number of virtual seconds, and a seed did not replay the same (issue #8).
  await sandbox.ready();
  const store = createMemoryStore({ scheduler, autoIndexDelayMs: 5_000, sandbox, jobLookIntervalMs: lookIntervalMsFor(policy) });
  const workload = createWorkload({
    store,
    scheduler,
    random: SEED,
    dbCount: DB_COUNT,
    writesPerSecond: WRITES_PER_SECOND,
    updateFraction: 0.6,
    deleteFraction: 0.1,
    docSizeBytes: 400,
    ddocFraction: 0.1,
    skew: 3,
    maxDocsPerDb: 400,
  });
  workload.setup();

  let stats = (): { compactions: number; reclaimedBytes: number } => ({ compactions: 0, reclaimedBytes: 0 });
  let finish = async (): Promise<void> => undefined;
  if (policy === "upholster" || policy === "tuned") {
    const daemon = createCompactionDaemon({
      store,
      scheduler,
      config: policy === "tuned" && TUNED !== undefined ? TUNED.config.smoosh : defaultSmooshConfig,
      logger: silentLogger,
      events: store.createEventSource(),
    });
    await daemon.start();
    stats = () => {
      const m = daemon.metrics();
      return { compactions: m.started + m.adopted, reclaimedBytes: m.bytesReclaimed };
    };
    finish = () => daemon.stop();
  } else if (policy === "every-write") {
    stats = compactAfterEveryWrite(store).stats;
  }

  let peakBytes = 0;
  let sumBytes = 0;
  let samples = 0;
  const endMs = scheduler.nowMs() + HOURS * 3_600_000;
  let nextSampleMs = scheduler.nowMs();
  while (scheduler.nowMs() < endMs) {
    workload.step(Math.round((WRITES_PER_SECOND * STEP_MS) / 1000));
    // One event-loop turn per timer (the default is 5): with the sandbox ready, the store, the workload
    // and the daemon settle in microtasks alone, which one turn drains (same output, less CPU).
    await scheduler.advanceByAsync(STEP_MS, SETTLE_ROUNDS);
    if (scheduler.nowMs() >= nextSampleMs) {
      const bytes = totalFile(store);
      peakBytes = Math.max(peakBytes, bytes);
      sumBytes += bytes;
      samples++;
      nextSampleMs += SAMPLE_EVERY_MS;
      if (TRACE) {
        const t = store.totals();
        const s = stats();
        console.error(`trace ${samples} ${t.dbFileBytes} ${t.dbActiveBytes} ${t.viewFileBytes} ${t.viewActiveBytes} ${s.compactions} ${s.reclaimedBytes} ${scheduler.pendingTimers()}`);
      }
    }
  }
  await finish();
  const { compactions, reclaimedBytes } = stats();
  return {
    policy,
    peakBytes,
    meanBytes: sumBytes / Math.max(1, samples),
    finalBytes: totalFile(store),
    liveBytes: totalActive(store),
    reclaimedBytes,
    compactions,
    wallMs: Number(process.hrtime.bigint() - started) / 1e6,
    cpuMs: ((cpu) => (cpu.user + cpu.system) / 1000)(process.cpuUsage(cpuStarted)),
  };
}

const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MiB`;

const printRow = (r: Result): void => {
  console.log(
    `${r.policy.padEnd(12)} peak ${mb(r.peakBytes).padStart(11)}  mean ${mb(r.meanBytes).padStart(11)}  ` +
      `final ${mb(r.finalBytes).padStart(11)} (live ${mb(r.liveBytes)})  reclaimed ${mb(r.reclaimedBytes).padStart(11)}  ` +
      `compactions ${String(r.compactions).padStart(8)}  (${(r.wallMs / 1000).toFixed(1)} s wall, ${Math.round((HOURS * 3_600_000) / r.wallMs)}x real time; ` +
      `${(r.cpuMs / 1000).toFixed(1)} s CPU, ${Math.round((HOURS * 3_600_000) / r.cpuMs)}x)`,
  );
};

/** Every row, in order: side by side in child processes when more than one may run at once. */
async function runRows(): Promise<Result[]> {
  if (ROW_PROCESSES > 1) {
    const rowEnv = (policy: string): NodeJS.ProcessEnv => ({ ...process.env, SIM_POLICIES: policy, SIM_ROW_PROCESS: "1" });
    return runRowsInProcesses<Result>(POLICIES, ROW_PROCESSES, rowEnv, (_, r) => printRow(r));
  }
  const results: Result[] = [];
  for (const policy of POLICIES) {
    const r = await simulate(policy);
    results.push(r);
    printRow(r);
  }
  return results;
}

async function main(): Promise<void> {
  if (IS_ROW_PROCESS) return reportRow(await simulate(POLICIES[0]!));
  const started = process.hrtime.bigint();
  console.log(
    `bench:simulate: ${DB_COUNT} dbs, ${HOURS} h simulated, ${WRITES_PER_SECOND} writes/s, seed ${SEED}, map functions in ${SANDBOX_ENGINE}; ` +
      `db compaction ends ${JOB_ENDS === "looks" ? "seen in info reads (looks), as on CouchDB" : "reported at once"}; ` +
      `upholster: default channels${TUNED === undefined ? "" : `; tuned: SIM_CONFIG ${process.env.SIM_CONFIG}`}`,
  );
  for (const line of configWarningLines("SIM_CONFIG", TUNED)) console.log(line);
  const results = await runRows();
  if (results.length > 1) {
    const wallS = Number(process.hrtime.bigint() - started) / 1e9;
    const rowsS = results.reduce((sum, r) => sum + r.wallMs, 0) / 1000;
    console.log(`${results.length} rows in ${wallS.toFixed(1)} s wall (${ROW_PROCESSES} at a time; the rows' own times add up to ${rowsS.toFixed(1)} s)`);
  }
  const find = (policy: Policy): Result | undefined => results.find((r) => r.policy === policy);
  const [never, upholster, tuned, every] = [find("never"), find("upholster"), find("tuned"), find("every-write")];
  if (tuned !== undefined && never !== undefined) {
    console.log(`tuned vs never:           mean disk ${(tuned.meanBytes / never.meanBytes).toFixed(3)}x, peak ${(tuned.peakBytes / never.peakBytes).toFixed(3)}x`);
  }
  if (tuned !== undefined && upholster !== undefined) {
    console.log(
      `tuned vs upholster:       mean disk ${(tuned.meanBytes / upholster.meanBytes).toFixed(3)}x, peak ${(tuned.peakBytes / upholster.peakBytes).toFixed(3)}x, ` +
        `compactions ${(tuned.compactions / Math.max(1, upholster.compactions)).toFixed(3)}x`,
    );
  }
  if (upholster === undefined) return;
  if (never !== undefined) {
    console.log(
      `upholster vs never:       mean disk ${(upholster.meanBytes / never.meanBytes).toFixed(3)}x, peak ${(upholster.peakBytes / never.peakBytes).toFixed(3)}x`,
    );
  }
  if (every !== undefined) {
    console.log(
      `upholster vs every-write: mean disk ${(upholster.meanBytes / every.meanBytes).toFixed(3)}x, ` +
        `compactions ${(upholster.compactions / Math.max(1, every.compactions)).toFixed(4)}x`,
    );
  }
}

await main();
