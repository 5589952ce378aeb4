/**
 * Deterministic simulation of the background indexer: the real runtime
 * (`createIndexingDaemon`) on the in-memory store and a virtual clock, with
 * random writes, design doc changes (autoupdate switches, languages,
 * garbage), db deletions, queries and operator nudges, index backends that
 * take time, fail (transiently or not) or hang, store answers that come
 * back late and out of order (`withLatency`), and timers that fire early
 * or late (`VirtualScheduler({ jitter })`).
 *
 * Checked at every build start, at the backend (what really runs): never
 * more builds than the channels, never two of one index, never an ignored
 * db or an index its design docs switch off. Checked at the end: once the
 * churn stops, every index the rules want is up to date.
 *
 * A failure prints its seed; replay with
 *   SIM_SEED=<seed> npx vitest run test/simulation/indexing
 * Run more seeds with SIM_SEEDS=50.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore, createRandom, type MemoryStore, type Random } from "../../src/adapters/memory/index.js";
import { silentLogger } from "../../src/adapters/logging/index.js";
import { withLatency } from "../../src/adapters/latency/index.js";
import { createMemoryStatePort } from "../../src/adapters/state/index.js";
import { decodeIndexingConfig, refusalOf, STAGE_SUFFIX, totalChannels, viewIndexesOf, namedIndexesOf, type IndexingConfig, type IndexSpec } from "../../src/core/indexing/index.js";
import type { IniSections } from "../../src/core/shared/ini.js";
import type { BuildOptions, IndexBackend } from "../../src/ports/index-backend.js";
import type { Scheduler } from "../../src/ports/shell.js";
import { createIndexingDaemon, type IndexingDaemon } from "../../src/runtime/indexing/daemon.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";

const STEPS = Number(process.env.SIM_STEPS ?? 200);
const DBS = ["sim-a", "sim-b", "sim-c", "sim-d", "sim-e"];

const seeds = (): number[] => {
  if (process.env.SIM_SEED !== undefined) return [Number(process.env.SIM_SEED)];
  return Array.from({ length: Number(process.env.SIM_SEEDS ?? 4) }, (_, i) => 4000 + i * 7919);
};

const pick = <T>(random: Random, items: readonly T[]): T => items[random.int(items.length)] as T;

/**
 * An index backend whose builds take virtual time (a ms per update behind),
 * reaching the db's seq of their start; some fail (transiently or not),
 * some hang. It records what runs, for the invariants.
 */
class SimulatedBackend implements IndexBackend {
  readonly seqs = new Map<string, number>();
  readonly running = new Map<string, number>();
  starts = 0;
  constructor(
    readonly type: string,
    readonly field: string,
    private readonly store: MemoryStore,
    private readonly scheduler: Scheduler,
    private readonly random: Random,
    private readonly onStart: (db: string, spec: IndexSpec, backend: SimulatedBackend) => void,
  ) {}

  key(db: string, spec: IndexSpec): string {
    return `${db}\u0000${spec.key}`;
  }

  indexesOf(_db: string, designDocs: Parameters<IndexBackend["indexesOf"]>[1]) {
    return this.type === "views" ? viewIndexesOf(designDocs) : namedIndexesOf(this.type, this.field, designDocs);
  }

  async build(db: string, spec: IndexSpec, options: BuildOptions) {
    this.starts++;
    this.onStart(db, spec, this);
    const key = this.key(db, spec);
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    try {
      const info = await this.store.dbInfo(db);
      if (info === undefined) throw Object.assign(new Error("not_found"), { transient: false });
      const startSeq = info.updateSeqNumber;
      const behind = Math.max(0, startSeq - (this.seqs.get(key) ?? 0));
      const roll = this.random.next();
      // A hang (2%): only the build timeout's abort ends it.
      const ms = roll < 0.02 ? Number.POSITIVE_INFINITY : 1 + behind * 2 + this.random.int(200);
      await new Promise<void>((resolve, reject) => {
        if (options.signal.aborted) return reject(new Error("aborted"));
        const cancel = this.scheduler.setTimeout(resolve, ms);
        options.signal.addEventListener("abort", () => (cancel(), reject(new Error("aborted"))), { once: true });
      });
      if (roll < 0.1) throw Object.assign(new Error("the backend broke"), { transient: roll < 0.07 });
      this.seqs.set(key, Math.max(this.seqs.get(key) ?? 0, startSeq));
      return { indexSeq: this.seqs.get(key)!, dbSeq: (await this.store.dbInfo(db))?.updateSeqNumber };
    } finally {
      this.running.set(key, (this.running.get(key) ?? 1) - 1);
    }
  }

  async progress(db: string, spec: IndexSpec) {
    const key = this.key(db, spec);
    return { indexSeq: this.seqs.get(key) ?? 0, updating: (this.running.get(key) ?? 0) > 0 };
  }

  async cleanup(): Promise<void> {}

  forget(db: string): void {
    for (const key of [...this.seqs.keys()]) if (key.startsWith(`${db}\u0000`)) this.seqs.delete(key);
  }
}

const ddocBody = (random: Random): Record<string, unknown> => ({
  views: { v: { map: `function (doc) { emit(doc.n, ${random.int(3)}); }` } },
  ...(random.chance(0.4) ? { indexes: { t: { index: `function (doc) { index("t", ${random.int(3)}); }` } } } : {}),
  ...pick(random, [{}, {}, {}, { autoupdate: false }, { autoupdate: { views: false } }, { autoupdate: { indexes: false } }]),
  ...pick(random, [{}, {}, { language: "javascript" }, { language: "erlang" }, { language: 7 }]),
});

const randomIni = (random: Random): IniSections => ({
  ken: {
    batch_channels: String(1 + random.int(3)),
    incremental_channels: String(random.int(3)),
    max_incremental_updates: String(pick(random, [5, 50, 1000])),
    delay: String(pick(random, [0, 500, 5000])),
    retry_initial_msec: "200",
    retry_max_msec: "5000",
    retry_max_attempts: String(random.int(4)),
    build_timeout_msec: "30000",
    max_inspections: String(1 + random.int(3)),
    deploy_check_msec: "500",
  },
  fabric: { index_updater_delay_msec: String(pick(random, [0, 250, 2000])), index_updater_resolution_msec: String(pick(random, [50, 100, 1000])) },
  "ken.ignore": random.chance(0.5) ? { [pick(random, DBS)]: "true" } : {},
});

const decode = (ini: IniSections): IndexingConfig => {
  const decoded = decodeIndexingConfig(ini);
  if (decoded._tag === "Left") throw new Error(JSON.stringify(decoded.left));
  return decoded.right;
};

async function simulate(seed: number, busy: boolean): Promise<{ violations: string[]; stale: string[]; builds: number }> {
  const random = createRandom(seed);
  const noise = createRandom(seed ^ 0x5eed);
  const scheduler = new VirtualScheduler({ startMs: Date.UTC(2026, 0, 1), ...(busy ? { jitter: { random: () => noise.next(), maxLateMs: 2000, maxEarlyMs: 500 } } : {}) });
  const store = createMemoryStore({ scheduler });
  const served = busy ? withLatency(store, { scheduler, random: () => noise.next(), maxLatencyMs: 1000 }) : store;
  const config = decode(randomIni(random));
  const violations: string[] = [];
  const daemonRef: { current?: IndexingDaemon } = {};
  const languages = new Set(config.allowedLanguages);
  const backends: SimulatedBackend[] = [];
  const onStart = (db: string, spec: IndexSpec, backend: SimulatedBackend): void => {
    const at = `${scheduler.nowMs()} ${db} ${spec.name} (${spec.type})`;
    const running = backends.reduce((n, b) => n + [...b.running.values()].reduce((a, c) => a + c, 0), 0);
    if (running + 1 > totalChannels(config)) violations.push(`${at}: ${running + 1} builds > ${totalChannels(config)} channels`);
    if ((backend.running.get(backend.key(db, spec)) ?? 0) > 0) violations.push(`${at}: a second build of one index`);
    if (config.ignoredDbs.includes(db)) violations.push(`${at}: ignored db built`);
    const known = daemonRef.current?.inspect().designDocs.get(db) ?? [];
    // A deploy's stage is built whatever it says.
    const wanted = (id: string): boolean => id.endsWith(STAGE_SUFFIX) || refusalOf(known.find((d) => d.id === id), spec.field, languages) === undefined;
    if (!spec.ddocs.some(wanted)) violations.push(`${at}: not wanted by its design docs`);
  };
  backends.push(new SimulatedBackend("views", "views", store, scheduler, createRandom(seed + 1), onStart));
  backends.push(new SimulatedBackend("search", "indexes", store, scheduler, createRandom(seed + 2), onStart));
  const daemon = createIndexingDaemon({ store: served, backends, scheduler, config, logger: silentLogger, state: createMemoryStatePort(), seed });
  daemonRef.current = daemon;
  const events = store.createEventSource();
  await events.start((event) => daemon.handleStoreEvent(event));
  await daemon.start();

  for (const db of DBS) store.createDb(db);
  for (let i = 0; i < STEPS; i++) {
    const db = pick(random, DBS);
    const roll = random.next();
    if (!store.dbExists(db)) store.createDb(db);
    else if (roll < 0.55) store.writeDocs(db, Array.from({ length: 1 + random.int(30) }, (_, j) => ({ _id: `d${i}-${j}`, n: j })));
    else if (roll < 0.7) {
      const id = `_design/d${random.int(3)}`;
      const current = await store.getDoc(db, id);
      if (random.chance(0.2) && current !== undefined) store.writeDocs(db, [{ _id: id, _rev: current._rev, _deleted: true }]);
      else store.writeDocs(db, [{ ...ddocBody(random), _id: id, ...(current === undefined ? {} : { _rev: current._rev }) }]);
    } else if (roll < 0.73) {
      store.deleteDb(db);
      for (const backend of backends) backend.forget(db);
    } else if (roll < 0.78) daemon.noteQuery(db, `d${random.int(3)}`);
    else if (roll < 0.8) daemon.prioritize(db);
    else if (roll < 0.82) daemon.enqueue(db);
    else if (roll < 0.84) daemon.deploy(db, `d${random.int(3)}`, ddocBody(random));
    await scheduler.advanceByAsync(random.int(1500));
  }

  // The churn stops: everything wanted must end up fresh (failures are retried; hangs time out).
  const stale = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const db of DBS) {
      if (config.ignoredDbs.includes(db) || !store.dbExists(db)) continue;
      const seq = (await store.dbInfo(db))!.updateSeqNumber;
      const ddocs = (await store.designDocs(db)).map((d) => ({ id: d.id, body: d.body }));
      for (const backend of backends) {
        for (const spec of backend.indexesOf(db, ddocs).indexes) {
          const wanted = spec.ddocs.some((id) => refusalOf(ddocs.find((d) => d.id === id), spec.field, languages) === undefined);
          const failedForGood = daemon.inspect().known.get(`${db}\u0000${spec.type}\u0000${spec.key}`)?.gaveUp === true;
          if (wanted && !failedForGood && (backend.seqs.get(backend.key(db, spec)) ?? 0) < seq) out.push(`${db} ${spec.name} (${spec.type})`);
        }
      }
    }
    return out;
  };
  for (let i = 0; i < 400 && (await stale()).length > 0; i++) await scheduler.advanceByAsync(5_000);
  const left = await stale();
  const builds = backends.reduce((n, b) => n + b.starts, 0);
  const stopping = daemon.stop();
  let stopped = false;
  void stopping.then(() => (stopped = true));
  while (!stopped) await scheduler.advanceByAsync(1_000);
  await events.stop();
  store.close();
  return { violations, stale: left, builds };
}

describe("indexing simulation", () => {
  for (const seed of seeds()) {
    for (const busy of [false, true]) {
      it(`seed ${seed}${busy ? " on a busy machine (late answers, early and late timers)" : ""}: invariants hold at every build, and every wanted index ends fresh`, async () => {
        const { violations, stale, builds } = await simulate(seed, busy);
        expect({ seed, violations }).toEqual({ seed, violations: [] });
        expect({ seed, stale }).toEqual({ seed, stale: [] });
        expect(builds).toBeGreaterThan(0);
      });
    }
  }
});
