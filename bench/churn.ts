/**
 * `npm run bench:churn`: does compaction keep up with steady churn, and at
 * what request cost? The scenario of issue #8: 20 databases (q=1) of 2,000
 * docs of ~300 bytes, then steady churn (batches of 200 updates into random
 * dbs, back to back); the total `sizes.file` and `sizes.active` over the 20
 * dbs are sampled every second.
 *
 * Rows, in one run: "no compaction" (the baseline), upholster with default
 * settings, and with CHURN_COUCH_SMOOSH=1 CouchDB's own smoosh. Printed per
 * row: mean and peak file, mean file/active, compactions, upholster's
 * requests per db update (every request it makes, through a counting proxy;
 * a db update is one bulk write; also per second and per compaction, which
 * unlike the per-update figure do not follow the server's write rate), and
 * the write amplification (bytes rewritten by compaction per byte the churn
 * appended). Then where upholster sits on the size/requests trade-off: each
 * compacted db's file/active as its compaction started, and (mean
 * file/active - 1) x requests per update, about constant for a workload
 * while the channel is busy (docs/benchmarks.md, "Active falls at
 * compaction, and a floor"). Last, the floor under every policy
 * (src/core/compaction/request-floor.ts): the fewest compactions, and
 * requests per update, with which any policy could hold file/active <= 3
 * over the row's updates, at the row's most compactions at once and way of
 * seeing ends; and how near the row came to the floor at its own
 * file/active.
 *
 * upholster starts first, as a daemon that runs all along would have: the
 * dbs are created and filled, and the churn begins once its channels have
 * observed for `wait_secs` (30 s by default), which every row waits too.
 *
 * Where: against COUCHDB_URL (its own ken and smoosh must be off, e.g.
 * `[ken] batch_channels = 0`, `[smoosh.*] concurrency = 0`), and always on
 * the in-memory store on a virtual clock at the write rate CouchDB reached
 * (or CHURN_MEMORY_BATCHES_PER_SEC, default 20).
 *
 *   CHURN_SECONDS (180)  churn length;  CHURN_DBS (20);  CHURN_DOCS (2000)
 *   CHURN_JOB_POLL_MS    `[couchdb] job_poll_interval_ms` for the CouchDB row (1000): the
 *                        trade-off between seeing a compaction's end early (more
 *                        compactions, smaller files) and requests
 *   CHURN_MEMORY_JOB_ENDS  how the memory rows see a db compaction end: "events", at once,
 *                        as the memory store reports them by default; "looks", as a CouchDB
 *                        client does, in an info read after it (the daemon looks every
 *                        job_poll_interval_ms, as on CouchDB; src/adapters/memory/
 *                        unannounced-ends.ts), which prices a CouchDB tuning as CouchDB
 *                        will; "both" (default): a table each
 *   CHURN_CONFIG         a CouchDB-style INI file for upholster's rows instead of the
 *                        defaults (e.g. `[smoosh.ratio_dbs] concurrency = 3`), to see
 *                        what a tuning costs and saves; its `[couchdb]
 *                        job_poll_interval_ms` applies to the CouchDB row
 */
import { request } from "undici";
import { createServer, request as httpRequest, type ClientRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createCouchStore } from "../src/adapters/couchdb-http/index.js";
import { createMemoryStore, createRandom, type MemoryStore, type Random } from "../src/adapters/memory/index.js";
import { createMemoryStatePort } from "../src/adapters/state/index.js";
import { silentLogger } from "../src/adapters/logging/index.js";
import type { CompactionObject, DocWrite, JobHandle, Store } from "../src/ports/store.js";
import { createUpholster } from "../src/runtime/upholster.js";
import type { IniSections } from "../src/core/shared/ini.js";
import { VirtualScheduler } from "../src/runtime/scheduler.js";
import { configWarningLines, loadBenchConfig } from "./config-file.js";
import { quantile } from "./quantile.js";
import { defaultCouchSettings } from "../src/config/couchdb-section.js";
import { evenness, fewestCompactionsFor, leastConcurrencyFor, leastRequestsPerCompaction, type ChurnShape } from "../src/core/compaction/request-floor.js";

const SECONDS = Number(process.env.CHURN_SECONDS ?? 180);
const DBS = Number(process.env.CHURN_DBS ?? 20);
const DOCS = Number(process.env.CHURN_DOCS ?? 2000);
const CONFIG_PATH = process.env.CHURN_CONFIG;

/** upholster's config for its rows: the defaults, or CHURN_CONFIG's INI. */
const LOADED = loadBenchConfig("CHURN_CONFIG", CONFIG_PATH);
const CONFIG: IniSections = LOADED?.ini ?? {};
const configJobPollMs = LOADED?.ini.couchdb?.job_poll_interval_ms === undefined ? undefined : LOADED.config.couchdb.jobPollIntervalMs;
/** CHURN_JOB_POLL_MS, else CHURN_CONFIG's `[couchdb] job_poll_interval_ms`, else the adapter's default. */
const JOB_POLL_MS = process.env.CHURN_JOB_POLL_MS === undefined ? configJobPollMs : Number(process.env.CHURN_JOB_POLL_MS);
type JobEnds = "events" | "looks";
/** CHURN_MEMORY_JOB_ENDS: how the memory rows see a compaction end (the header above). */
const MEMORY_JOB_ENDS = ((ends: string): readonly JobEnds[] => {
  if (ends === "both") return ["events", "looks"];
  if (ends === "looks" || ends === "events") return [ends];
  throw new Error(`CHURN_MEMORY_JOB_ENDS: expected events, looks or both, got ${JSON.stringify(ends)}`);
})(process.env.CHURN_MEMORY_JOB_ENDS ?? "both");
/** The memory rows' looks: as the CouchDB row's (`[couchdb] job_poll_interval_ms`, or its default). */
const MEMORY_LOOK_MS = JOB_POLL_MS ?? defaultCouchSettings.jobPollIntervalMs;
const BATCH = 200;
const BODY = "x".repeat(250); // with ids and fields, ~300 bytes a doc
/** Default `wait_secs` plus a second: every channel has finished observing. */
const WAIT_MS = 31_000;

interface Sample {
  readonly fileBytes: number;
  readonly activeBytes: number;
}

interface RowResult {
  readonly who: string;
  readonly samples: readonly Sample[];
  /** Unknown for CouchDB's own smoosh (it is not driven through the bench's store). */
  readonly compactions: number | undefined;
  readonly dbUpdates: number;
  readonly requests: number | undefined;
  readonly requestKinds: Readonly<Record<string, number>>;
  readonly appendedBytes: number;
  readonly rewrittenBytes: number;
  /** Each compaction's db file/active as it started (how far past the threshold a busy channel lets dbs go). */
  readonly ratiosAtStart: readonly number[];
  /** Updates of each db over the churn (how evenly they fell, for the floor). */
  readonly updatesPerDb: readonly number[];
  /** The most compactions that ran at once. */
  readonly mostAtOnce: number;
  /** Whether the daemon heard compaction ends from the store (memory "events") or had to read them (CouchDB, memory "looks"). */
  readonly endsAnnounced: boolean;
}

// --- the churn itself, on any document store ------------------------------------------

interface ChurnTarget {
  bulk(db: string, docs: readonly DocWrite[]): Promise<readonly { id: string; rev?: string; ok: boolean }[]>;
}

class Churn {
  private readonly revs = new Map<string, Map<string, string>>();
  dbUpdates = 0;
  /** Updates per db in the churn (the fill is not one). */
  private readonly updatesByDb = new Map<string, number>();
  constructor(
    private readonly target: ChurnTarget,
    readonly dbs: readonly string[],
    private readonly random: Random,
  ) {}

  async fill(): Promise<void> {
    for (const db of this.dbs) {
      const revs = new Map<string, string>();
      for (let start = 0; start < DOCS; start += 500) {
        const docs = Array.from({ length: Math.min(500, DOCS - start) }, (_, i) => ({ _id: `doc-${start + i}`, n: 0, body: BODY }));
        for (const r of await this.target.bulk(db, docs)) if (r.ok && r.rev !== undefined) revs.set(r.id, r.rev);
      }
      this.revs.set(db, revs);
    }
  }

  /** One batch of 200 updates into a random db. */
  async step(): Promise<void> {
    const db = this.dbs[this.random.int(this.dbs.length)]!;
    const revs = this.revs.get(db)!;
    const ids = new Set<string>();
    while (ids.size < Math.min(BATCH, DOCS)) ids.add(`doc-${this.random.int(DOCS)}`);
    const docs = [...ids].map((id) => ({ _id: id, _rev: revs.get(id), n: this.dbUpdates, body: BODY }));
    for (const r of await this.target.bulk(db, docs)) if (r.ok && r.rev !== undefined) revs.set(r.id, r.rev);
    this.dbUpdates += 1;
    this.updatesByDb.set(db, (this.updatesByDb.get(db) ?? 0) + 1);
  }

  /** Each db's updates, in `dbs` order. */
  updatesPerDb(): number[] {
    return this.dbs.map((db) => this.updatesByDb.get(db) ?? 0);
  }
}

/** A file's size over its live data's (a sample of the 20 dbs' totals, or one db's info). */
const fileToActive = (s: Sample): number => s.fileBytes / Math.max(1, s.activeBytes);

/** The mean of the samples' file/active: the table's "mean file/active". */
const meanFileToActive = (samples: readonly Sample[]): number => samples.reduce((sum, s) => sum + fileToActive(s), 0) / Math.max(1, samples.length);

const summarize = (row: RowResult): string[] => {
  const files = row.samples.map((s) => s.fileBytes);
  const meanFile = files.reduce((a, b) => a + b, 0) / Math.max(1, files.length);
  const peakFile = Math.max(0, ...files);
  const meanRatio = meanFileToActive(row.samples);
  const perUpdate = row.requests === undefined ? "-" : (row.requests / Math.max(1, row.dbUpdates)).toFixed(3);
  const amplification = row.appendedBytes > 0 && row.compactions !== undefined ? (row.rewrittenBytes / row.appendedBytes).toFixed(2) : "-";
  return [row.who, mb(meanFile), mb(peakFile), meanRatio.toFixed(2), row.compactions === undefined ? "-" : String(row.compactions), String(row.dbUpdates), perUpdate, amplification];
};

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;

const printTable = (title: string, rows: readonly RowResult[]): void => {
  const header = ["who", "mean file", "peak file", "mean file/active", "compactions", "db updates", "requests/update", "write amplification"];
  const lines = [header, ...rows.map(summarize)];
  const widths = header.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  console.log(`\n${title}`);
  for (const line of lines) console.log(`| ${line.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`);
  for (const row of rows) {
    if (Object.keys(row.requestKinds).length > 0) console.log(`  ${row.who} requests: ${JSON.stringify(row.requestKinds)}`);
    // Per update the cost follows the server's write rate; per second and per compaction it does not (docs/benchmarks.md).
    if (row.requests !== undefined && row.compactions !== undefined && row.compactions > 0) {
      console.log(`  ${row.who}: ${(row.requests / SECONDS).toFixed(2)} requests/s, ${(row.requests / row.compactions).toFixed(2)} requests per compaction`);
    }
  }
  const base = rows.find((r) => r.who === "no compaction");
  for (const row of rows) {
    if (row === base || base === undefined) continue;
    const peak = (r: RowResult) => Math.max(0, ...r.samples.map((s) => s.fileBytes));
    console.log(`  ${row.who}: peak file ${(peak(row) / Math.max(1, peak(base))).toFixed(3)}x the baseline's`);
  }
  for (const row of rows) printTradeOff(row);
  if (base !== undefined) for (const row of rows) if (row !== base) printFloor(row, base);
};

/** The issue's two targets: mean file/active <= 3 with <= 0.1 requests per db update. */
const TARGET_FILE_TO_ACTIVE = 3;
const TARGET_REQUESTS_PER_UPDATE = 0.1;

/**
 * The row's churn as the floor needs it (request-floor.ts): garbage per db
 * update is what the churn appended less the live data's own growth (the
 * baseline's active grows by the past revisions that no compaction stubs),
 * over the row's mean live data per db.
 */
const churnShape = (row: RowResult, base: RowResult): ChurnShape | undefined => {
  const first = base.samples[0];
  const last = base.samples.at(-1);
  if (first === undefined || last === undefined || row.dbUpdates === 0 || base.dbUpdates === 0 || row.samples.length === 0) return undefined;
  // The samples span all but the first second of the baseline's updates.
  const sampledUpdates = (base.dbUpdates * (base.samples.length - 1)) / base.samples.length;
  const liveGrowthPerUpdate = sampledUpdates > 0 ? (last.activeBytes - first.activeBytes) / sampledUpdates : 0;
  const meanActive = row.samples.reduce((sum, s) => sum + s.activeBytes, 0) / row.samples.length;
  return {
    garbageBytesPerUpdate: Math.max(0, row.appendedBytes / row.dbUpdates - liveGrowthPerUpdate),
    activeBytesPerDb: meanActive / Math.max(1, row.updatesPerDb.length),
    evenness: evenness(row.updatesPerDb),
  };
};

/**
 * What no policy can do better than on this churn (request-floor.ts): the
 * fewest compactions that hold the file/active target over this row's
 * updates from fresh files, the fewest requests those cost with this row's
 * most compactions at once and way of seeing ends, and from what
 * concurrency the two targets are within reach at all.
 */
const printFloor = (row: RowResult, base: RowResult): void => {
  if (row.requests === undefined || row.mostAtOnce === 0) return;
  const shape = churnShape(row, base);
  if (shape === undefined) return;
  const dbs = row.updatesPerDb.length;
  const compactions = fewestCompactionsFor(shape, row.dbUpdates, dbs, TARGET_FILE_TO_ACTIVE);
  const perCompaction = leastRequestsPerCompaction(row.mostAtOnce, row.endsAnnounced);
  const leastPerUpdate = (compactions * perCompaction) / row.dbUpdates;
  // How near the floor the row itself came: the least any policy pays for the file/active this row held.
  const ownRatio = meanFileToActive(row.samples);
  const ownLeast = (fewestCompactionsFor(shape, row.dbUpdates, dbs, ownRatio) * perCompaction) / row.dbUpdates;
  const ownActual = row.requests / row.dbUpdates;
  const concurrency = leastConcurrencyFor(compactions, row.dbUpdates, TARGET_REQUESTS_PER_UPDATE);
  const reach = row.endsAnnounced
    ? compactions <= TARGET_REQUESTS_PER_UPDATE * row.dbUpdates
      ? "within reach"
      : "out of reach"
    : concurrency === undefined
      ? "out of reach at any concurrency"
      : concurrency <= row.mostAtOnce
        ? "within reach"
        : `out of reach below ${concurrency} compactions at once`;
  console.log(
    `  ${row.who}: floor for any policy: file/active <= ${TARGET_FILE_TO_ACTIVE} over these ${row.dbUpdates} updates takes >= ${compactions} compactions ` +
      `(garbage ${kb(shape.garbageBytesPerUpdate)} a db update over ${kb(shape.activeBytesPerDb)} live a db, evenness ${shape.evenness.toFixed(3)}); ` +
      `at most ${row.mostAtOnce} at once with ends ${row.endsAnnounced ? "announced" : "seen in reads"}, >= ${perCompaction.toFixed(2)} requests each: ` +
      `>= ${leastPerUpdate.toFixed(3)} requests/update; ${TARGET_FILE_TO_ACTIVE} with ${TARGET_REQUESTS_PER_UPDATE}: ${reach}`,
  );
  console.log(
    `  ${row.who}: at its own file/active (${ownRatio.toFixed(2)}) the floor is ${ownLeast.toFixed(3)} requests/update; ` +
      `it made ${ownActual.toFixed(3)}${ownLeast > 0 ? `, ${(ownActual / ownLeast).toFixed(2)}x the floor` : ""}`,
  );
};

const kb = (bytes: number): string => `${(bytes / 1e3).toFixed(0)} KB`;

/**
 * Where a row sits on the trade-off between file size and requests: a db's
 * file/active as its compaction started, and (mean file/active - 1) x
 * requests per update, which stays about constant for a workload while the
 * channel is busy (docs/benchmarks.md, "Active falls at compaction, and a
 * floor"): the issue's targets, 3 and 0.1, need it at or below 0.2.
 */
const printTradeOff = (row: RowResult): void => {
  if (row.requests === undefined || row.ratiosAtStart.length === 0) return;
  const atStart = [...row.ratiosAtStart].sort((a, b) => a - b);
  const mean = atStart.reduce((a, b) => a + b, 0) / atStart.length;
  const product = (meanFileToActive(row.samples) - 1) * (row.requests / Math.max(1, row.dbUpdates));
  console.log(
    `  ${row.who}: db file/active at a compaction's start: mean ${mean.toFixed(2)}, p10 ${quantile(atStart, 0.1).toFixed(2)}, p90 ${quantile(atStart, 0.9).toFixed(2)}; ` +
      `(mean file/active - 1) x requests/update = ${product.toFixed(3)} (file/active <= 3 with <= 0.1 requests/update needs <= 0.2)`,
  );
};

// --- the memory store, on a virtual clock -------------------------------------------

/** Counts every port call the daemon makes (its "requests"). */
function countingStore(store: Store, counts: Record<string, number>): Store {
  const count = (kind: string) => (counts[kind] = (counts[kind] ?? 0) + 1);
  const wrap = <A extends unknown[], R>(kind: string, fn: (...args: A) => Promise<R>) => (...args: A) => {
    count(kind);
    return fn(...args);
  };
  return delegate(store, {
    listDbs: wrap("listDbs", () => store.listDbs()),
    dbInfo: wrap("dbInfo", (db: string) => store.dbInfo(db)),
    dbInfos: wrap("dbInfos", (dbs: readonly string[]) => store.dbInfos!(dbs)),
    designDocs: wrap("designDocs", (db: string) => store.designDocs(db)),
    viewIndexInfo: wrap("viewIndexInfo", (db: string, ddoc: string) => store.viewIndexInfo(db, ddoc)),
    startJob: wrap("startJob", (object: CompactionObject) => store.startJob(object)),
    attachJob: wrap("attachJob", (object: CompactionObject) => store.attachJob(object)),
  });
}

/** Every Store method of `store`, bound to it (adapters are class instances: spreading loses methods), with overrides. */
const delegate = (store: Store, overrides: Partial<Store>): Store => ({
  listDbs: () => store.listDbs(),
  dbInfo: (db) => store.dbInfo(db),
  ...(store.dbInfos !== undefined ? { dbInfos: (dbs: readonly string[]) => store.dbInfos!(dbs) } : {}),
  ...(store.jobLookIntervalMs !== undefined ? { jobLookIntervalMs: store.jobLookIntervalMs } : {}),
  designDocs: (db) => store.designDocs(db),
  viewIndexInfo: (db, ddoc) => store.viewIndexInfo(db, ddoc),
  startJob: (object) => store.startJob(object),
  attachJob: (object) => store.attachJob(object),
  ensureDb: (db) => store.ensureDb(db),
  getDoc: (db, id) => store.getDoc(db, id),
  bulkDocs: (db, docs) => store.bulkDocs(db, docs),
  changes: (db, query) => store.changes(db, query),
  currentSeq: (db) => store.currentSeq(db),
  ...overrides,
});

/**
 * Records each compaction's rewritten bytes (the db's size after it), its
 * db's file/active as it started (when `ratioAtStart` knows it), and counts them.
 */
function jobWatcher(store: Store, sizeAfter: (object: CompactionObject) => Promise<number>, ratioAtStart: (object: CompactionObject) => Promise<number | undefined>) {
  const stats = { compactions: 0, rewrittenBytes: 0, ratiosAtStart: [] as number[], running: 0, mostAtOnce: 0 };
  const watch = (object: CompactionObject, handle: JobHandle): JobHandle => {
    stats.compactions += 1;
    stats.running += 1;
    stats.mostAtOnce = Math.max(stats.mostAtOnce, stats.running);
    void ratioAtStart(object).then((ratio) => {
      if (ratio !== undefined) stats.ratiosAtStart.push(ratio);
    });
    void handle.done.then(async (outcome) => {
      stats.running -= 1;
      if (outcome.ok) stats.rewrittenBytes += await sizeAfter(object);
    });
    return handle;
  };
  return {
    stats,
    store: delegate(store, {
      startJob: async (object) => watch(object, await store.startJob(object)),
      attachJob: async (object) => watch(object, await store.attachJob(object)),
    }),
  };
}

async function memoryRow(who: "no compaction" | "upholster", batchesPerSec: number, jobEnds: JobEnds): Promise<RowResult> {
  const scheduler = new VirtualScheduler({ startMs: Date.UTC(2026, 10, 23) });
  const store: MemoryStore = createMemoryStore({
    scheduler,
    autoIndexDelayMs: false,
    jobLookIntervalMs: jobEnds === "looks" ? MEMORY_LOOK_MS : undefined,
  });
  const counts: Record<string, number> = {};
  const watcher = jobWatcher(
    countingStore(store, counts),
    async (object) => (await store.dbInfo(object.db))?.activeBytes ?? 0,
    async (object) => {
      const info = await store.dbInfo(object.db);
      return info === undefined ? undefined : fileToActive(info);
    },
  );
  const upholster =
    who === "upholster"
      ? createUpholster({ store: watcher.store, events: store.createEventSource(), scheduler, logger: silentLogger, config: CONFIG })
      : undefined;
  await upholster?.start();
  const startedAtMs = scheduler.nowMs();
  const dbs = Array.from({ length: DBS }, (_, i) => `churn-${i}`);
  for (const db of dbs) store.createDb(db);
  const churn = new Churn({ bulk: async (db, docs) => store.writeDocs(db, docs) }, dbs, createRandom(42));
  await churn.fill();
  await scheduler.advanceToAsync(startedAtMs + WAIT_MS);
  for (const key of Object.keys(counts)) delete counts[key]; // the cost of the churn, not of the setup
  const ownReadsBefore = store.jobWatcherOwnReads();
  const appendedBefore = store.totals().dbAppendedBytes;
  const samples: Sample[] = [];
  const stepMs = 1000 / batchesPerSec;
  let nextSampleMs = scheduler.nowMs() + 1000;
  const endMs = scheduler.nowMs() + SECONDS * 1000;
  while (scheduler.nowMs() < endMs) {
    await churn.step();
    await scheduler.advanceByAsync(stepMs, 1);
    if (scheduler.nowMs() >= nextSampleMs) {
      const t = store.totals();
      samples.push({ fileBytes: t.dbFileBytes, activeBytes: t.dbActiveBytes });
      nextSampleMs += 1000;
    }
  }
  await upholster?.stop();
  // What CouchDB's compaction watcher would have asked by itself (none while the daemon looks in time).
  const ownReads = store.jobWatcherOwnReads() - ownReadsBefore;
  if (ownReads > 0) counts["watcher's own dbInfo"] = ownReads;
  const requests = Object.values(counts).reduce((a, b) => a + b, 0);
  return {
    who,
    samples,
    compactions: watcher.stats.compactions,
    dbUpdates: churn.dbUpdates,
    requests: who === "upholster" ? requests : undefined,
    requestKinds: counts,
    appendedBytes: store.totals().dbAppendedBytes - appendedBefore,
    rewrittenBytes: watcher.stats.rewrittenBytes,
    ratiosAtStart: watcher.stats.ratiosAtStart,
    updatesPerDb: churn.updatesPerDb(),
    mostAtOnce: watcher.stats.mostAtOnce,
    endsAnnounced: jobEnds === "events",
  };
}

// --- CouchDB, on real time ------------------------------------------------------------------

interface CouchTarget {
  readonly base: string;
  readonly auth: string | undefined;
}

const couchTarget = (url: string): CouchTarget => {
  const parsed = new URL(url);
  const auth = parsed.username === "" ? undefined : `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString("base64")}`;
  parsed.username = "";
  parsed.password = "";
  return { base: parsed.toString().replace(/\/$/, ""), auth };
};

async function couch(target: CouchTarget, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await request(`${target.base}${path}`, {
    method: method as "GET",
    headers: { "content-type": "application/json", ...(target.auth !== undefined ? { authorization: target.auth } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.body.text();
  if (res.statusCode >= 400 && res.statusCode !== 404 && res.statusCode !== 412) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return text === "" ? undefined : JSON.parse(text);
}

interface DbsInfoRow {
  readonly key: string;
  readonly info?: { readonly sizes: { readonly file: number; readonly active: number } };
}

async function sampleCouch(target: CouchTarget, dbs: readonly string[]): Promise<Sample & { perDb: Map<string, Sample> }> {
  const rows = (await couch(target, "POST", "/_dbs_info", { keys: dbs })) as DbsInfoRow[];
  let fileBytes = 0;
  let activeBytes = 0;
  const perDb = new Map<string, Sample>();
  for (const row of rows) {
    const sizes = row.info?.sizes;
    if (sizes === undefined) continue;
    fileBytes += sizes.file;
    activeBytes += sizes.active;
    perDb.set(row.key, { fileBytes: sizes.file, activeBytes: sizes.active });
  }
  return { fileBytes, activeBytes, perDb };
}

/** An HTTP proxy that counts upholster's requests by kind, so its cost is measured from outside. */
async function countingProxy(target: CouchTarget): Promise<{ url: string; counts: Record<string, number>; close(): Promise<void> }> {
  const upstream = new URL(target.base);
  const counts: Record<string, number> = {};
  const kindOf = (method: string, path: string): string => {
    const p = path.split("?")[0]!;
    if (p === "/_dbs_info") return "POST /_dbs_info";
    if (p === "/_db_updates") return "GET /_db_updates (feed)";
    if (p === "/_active_tasks") return "GET /_active_tasks";
    if (p === "/_all_dbs") return "GET /_all_dbs";
    if (/\/_compact/.test(p)) return "POST _compact";
    if (/\/_all_docs/.test(p)) return "GET _all_docs (design docs)";
    if (/\/_design\/[^/]+\/_info$/.test(p)) return "GET _design/_info";
    if (/^\/[^/_][^/]*$/.test(p)) return `${method} /{db}`;
    return `${method} other`;
  };
  const upstreams = new Set<ClientRequest>();
  const server: Server = createServer((req, res) => {
    const kind = kindOf(req.method ?? "GET", req.url ?? "/");
    counts[kind] = (counts[kind] ?? 0) + 1;
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    // A client that goes away (the continuous _db_updates feed, when the store closes) takes its
    // upstream request along: left open, its heartbeats kept this process alive after the run.
    res.on("close", () => out.destroy());
    upstreams.add(out);
    out.on("close", () => upstreams.delete(out));
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const withAuth = new URL(`http://127.0.0.1:${port}`);
  const original = new URL(process.env.COUCHDB_URL!);
  withAuth.username = original.username;
  withAuth.password = original.password;
  return {
    url: withAuth.toString(),
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const out of upstreams) out.destroy();
        server.close(() => resolve());
      }),
  };
}

const SMOOSH_DB_CHANNELS = ["ratio_dbs", "slack_dbs", "upgrade_dbs"];

async function setCouchSmoosh(target: CouchTarget, concurrency: string): Promise<string[]> {
  const before: string[] = [];
  for (const channel of SMOOSH_DB_CHANNELS) {
    before.push((await couch(target, "PUT", `/_node/_local/_config/smoosh.${channel}/concurrency`, concurrency)) as string);
  }
  return before;
}

async function couchRow(target: CouchTarget, who: "no compaction" | "upholster" | "CouchDB's smoosh"): Promise<RowResult> {
  const tag = who === "upholster" ? "u" : who === "no compaction" ? "n" : "s";
  const dbs = Array.from({ length: DBS }, (_, i) => `churn_${tag}_${Date.now().toString(36)}_${i}`);
  const proxy = who === "upholster" ? await countingProxy(target) : undefined;
  const handle = proxy === undefined ? undefined : createCouchStore({ url: proxy.url, logger: silentLogger, state: createMemoryStatePort(), jobPollIntervalMs: JOB_POLL_MS });
  const sizes = new Map<string, Sample>();
  const watcher =
    handle === undefined
      ? undefined
      : jobWatcher(
          handle.store,
          async (object) => sizes.get(object.db)?.activeBytes ?? 0,
          // The sampler's, at most a second old: asking CouchDB again would load the server under test.
          async (object) => {
            const sample = sizes.get(object.db);
            return sample === undefined ? undefined : fileToActive(sample);
          },
        );
  const upholster =
    handle === undefined || watcher === undefined
      ? undefined
      : createUpholster({ store: watcher.store, events: handle.events, logger: silentLogger, config: CONFIG });
  const smooshBefore = who === "CouchDB's smoosh" ? await setCouchSmoosh(target, "1") : undefined;
  await upholster?.start();
  const startedAtMs = Date.now();
  for (const db of dbs) await couch(target, "PUT", `/${db}?q=1`);
  const churn = new Churn(
    { bulk: async (db, docs) => (await couch(target, "POST", `/${db}/_bulk_docs`, { docs })) as { id: string; rev?: string; ok: boolean }[] },
    dbs,
    createRandom(42),
  );
  await churn.fill();
  await new Promise((r) => setTimeout(r, Math.max(0, startedAtMs + WAIT_MS - Date.now())));
  if (proxy !== undefined) for (const key of Object.keys(proxy.counts)) delete proxy.counts[key]; // the churn's cost, not the setup's
  const first = await sampleCouch(target, dbs);
  const samples: Sample[] = [];
  let running = true;
  let appendedBytes = 0;
  const sampler = (async () => {
    let last = first;
    while (running) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = await sampleCouch(target, dbs);
      for (const [db, s] of now.perDb) {
        sizes.set(db, s);
        const before = last.perDb.get(db);
        // Growth between samples is appended bytes; a fall is a compaction (not counted here).
        if (before !== undefined && s.fileBytes > before.fileBytes) appendedBytes += s.fileBytes - before.fileBytes;
      }
      last = now;
      samples.push(now);
    }
  })();
  const endMs = Date.now() + SECONDS * 1000;
  while (Date.now() < endMs) await churn.step();
  running = false;
  await sampler;
  await upholster?.stop();
  await handle?.close();
  await proxy?.close();
  if (smooshBefore !== undefined) await setCouchSmoosh(target, smooshBefore[0] ?? "0");
  for (const db of dbs) await couch(target, "DELETE", `/${db}`);
  const requestKinds = proxy?.counts ?? {};
  // The continuous _db_updates feed is one long request, not a per-update cost; kept in the breakdown.
  const requests = proxy === undefined ? undefined : Object.values(requestKinds).reduce((a, b) => a + b, 0);
  return {
    who,
    samples,
    compactions: watcher !== undefined ? watcher.stats.compactions : who === "no compaction" ? 0 : undefined,
    dbUpdates: churn.dbUpdates,
    requests,
    requestKinds,
    appendedBytes,
    rewrittenBytes: watcher?.stats.rewrittenBytes ?? 0,
    ratiosAtStart: watcher?.stats.ratiosAtStart ?? [],
    updatesPerDb: churn.updatesPerDb(),
    mostAtOnce: watcher?.stats.mostAtOnce ?? 0,
    endsAnnounced: false,
  };
}

// --- main ------------------------------------------------------------------------------------------

console.log(`bench:churn: ${DBS} dbs x ${DOCS} docs, batches of ${BATCH} updates back to back for ${SECONDS} s; upholster: ${CONFIG_PATH ? `CHURN_CONFIG ${CONFIG_PATH}` : "defaults"}${JOB_POLL_MS === undefined ? "" : `, job_poll_interval_ms ${JOB_POLL_MS}`}`);
for (const line of configWarningLines("CHURN_CONFIG", LOADED)) console.log(line);
let memoryRate = Number(process.env.CHURN_MEMORY_BATCHES_PER_SEC ?? 20);
const url = process.env.COUCHDB_URL;
if (url !== undefined && url !== "") {
  const target = couchTarget(url);
  const rows: RowResult[] = [];
  rows.push(await couchRow(target, "no compaction"));
  rows.push(await couchRow(target, "upholster"));
  if (process.env.CHURN_COUCH_SMOOSH === "1") rows.push(await couchRow(target, "CouchDB's smoosh"));
  printTable(`CouchDB at ${target.base}`, rows);
  if (process.env.CHURN_MEMORY_BATCHES_PER_SEC === undefined) memoryRate = rows[0]!.dbUpdates / SECONDS;
} else {
  console.log("CouchDB: skipped (COUCHDB_URL not set)");
}
// The baseline does not depend on how ends are seen (it compacts nothing): measured once.
const memoryBaseline = await memoryRow("no compaction", memoryRate, "events");
for (const jobEnds of MEMORY_JOB_ENDS) {
  const how = jobEnds === "looks" ? `compaction ends seen in info reads, looked at every ${MEMORY_LOOK_MS} ms as on CouchDB` : "compaction ends reported at once";
  printTable(`memory store, virtual clock, ${memoryRate.toFixed(1)} batches/s; ${how}`, [memoryBaseline, await memoryRow("upholster", memoryRate, jobEnds)]);
}
