/**
 * Daemon-level contract: the SAME scenarios against every store adapter, with
 * the real runtime (`createUpholster`) on the real scheduler. Nothing here
 * compacts by hand: upholster sees the store's events and compacts by itself
 * (short `wait_secs`, `staleness = 0`, small `min_size`); the scenarios only
 * write and watch. The ports the daemon gets are wrapped by a recorder that
 * passes every call through to the real adapter and notes which jobs the
 * daemon started or adopted.
 *
 * A harness says what its server cannot do (PouchDB Server: no view
 * compaction, no `compact_running`); those scenarios are skipped with the
 * reason in their title.
 */
import { describe, expect, it } from "vitest";
import type { EventSource, StoreEvent } from "../../src/ports/events.js";
import type { CompactionObject, JobHandle, Store } from "../../src/ports/store.js";
import { createUpholster, type Upholster } from "../../src/runtime/upholster.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { waitFor } from "../support/wait-for.js";
import type { ServerControl } from "./server-control.js";

/** One upholster instance's ports (a new instance over the same saved state is a restart). */
export interface DaemonPorts {
  readonly store: Store;
  readonly events: EventSource;
  close(): Promise<void>;
}

export interface DaemonHarness extends ServerControl {
  /** The scenario's own client: writes and inspection, never compaction. */
  readonly store: Store;
  /** Ports for a new upholster instance, sharing the harness's StatePort (feed seq, compacted seqs). */
  newInstance(): DaemonPorts;
}

export interface DaemonContractOptions {
  /** Why the server cannot compact views (the view scenario is skipped), or undefined. */
  readonly noViewCompaction?: string | undefined;
  /** Why a compaction started elsewhere cannot be seen (the adoption scenario is skipped), or undefined. */
  readonly noAdoption?: string | undefined;
  /** Docs and update rounds that make a db qualify (ratio > 2, file > min_size) on this server. */
  readonly grow?: { readonly docs: number; readonly rounds: number } | undefined;
  /** Some servers free disk space a while after a compaction (PouchDB's LevelDB). */
  readonly sizeFallTimeoutMs?: number | undefined;
  /** `sizes.file` must fall below this share of its peak (default 0.5). */
  readonly fallFactor?: number | undefined;
  /** Per scenario (default 60 s). */
  readonly testTimeoutMs?: number | undefined;
}

/** Small thresholds, short pauses: the scenarios see smoosh act within seconds. */
export const contractConfig = {
  smoosh: { wait_secs: "1", staleness: "0", rescan_interval: "0", retry_initial_secs: "1" },
  "smoosh.ratio_dbs": { min_size: "20000" },
  "smoosh.ratio_views": { min_size: "1000" },
  upholster: { log_level: "silent" },
};

const unique = (stem: string): string => `upholster_daemon_${stem}_${Math.random().toString(36).slice(2, 8)}`;

interface JobCall {
  readonly how: "started" | "adopted";
  readonly object: CompactionObject;
  readonly handle: JobHandle;
}

/** Passes every call to the adapter; notes the jobs the daemon started or adopted. */
const recording = (store: Store): { store: Store; jobs: JobCall[] } => {
  const jobs: JobCall[] = [];
  const recorded: Store = Object.create(store) as Store;
  Object.assign(recorded, {
    startJob: async (object: CompactionObject) => {
      const handle = await store.startJob(object);
      jobs.push({ how: "started", object, handle });
      return handle;
    },
    attachJob: async (object: CompactionObject) => {
      const handle = await store.attachJob(object);
      jobs.push({ how: "adopted", object, handle });
      return handle;
    },
  });
  // Methods not overridden keep `this` = the adapter (Object.create's prototype chain would bind `this` to the wrapper).
  for (const key of ["listDbs", "dbInfo", "dbInfos", "designDocs", "viewIndexInfo", "ensureDb", "getDoc", "bulkDocs", "changes", "currentSeq"] as const) {
    const method = store[key] as ((...args: unknown[]) => unknown) | undefined;
    if (method !== undefined) Object.assign(recorded, { [key]: (...args: unknown[]) => method.apply(store, args) });
  }
  return { store: recorded, jobs };
};

/** Also records what the event source delivered. */
const tapped = (source: EventSource): { source: EventSource; seen: StoreEvent[] } => {
  const seen: StoreEvent[] = [];
  return {
    seen,
    source: {
      start: (listener) =>
        source.start((event) => {
          seen.push(event);
          listener(event);
        }),
      stop: () => source.stop(),
      status: () => source.status(),
    },
  };
};

interface Running {
  readonly upholster: Upholster;
  readonly jobs: JobCall[];
  readonly seen: StoreEvent[];
  readonly ports: DaemonPorts;
  /** What the daemon logged, for failure messages. */
  logText(): string;
  stop(): Promise<void>;
}

const startUpholster = async (h: DaemonHarness): Promise<Running> => {
  const ports = h.newInstance();
  const { store, jobs } = recording(ports.store);
  const { source, seen } = tapped(ports.events);
  const logger = createRecordingLogger();
  const upholster = createUpholster({ store, events: source, config: contractConfig, logger });
  await upholster.start();
  return {
    upholster,
    jobs,
    seen,
    ports,
    logText: () => logger.text(),
    stop: async () => {
      await upholster.stop();
      await ports.close();
    },
  };
};

const jobsFor = (run: Running, kind: CompactionObject["kind"], db: string, how?: JobCall["how"]): JobCall[] =>
  run.jobs.filter((j) => j.object.kind === kind && j.object.db === db && (how === undefined || j.how === how));

/** Insert `docs` docs, then update each `rounds` times: old revisions pile up as garbage. */
const grow = async (store: Store, db: string, docs: number, rounds: number, onRound?: () => Promise<void>): Promise<void> => {
  let revs = new Map<string, string>();
  const body = "z".repeat(400);
  for (const r of await store.bulkDocs(db, Array.from({ length: docs }, (_, i) => ({ _id: `d${i}`, type: "item", n: i, body })))) if (r.ok) revs.set(r.id, r.rev);
  await onRound?.();
  for (let round = 0; round < rounds; round++) {
    const res = await store.bulkDocs(db, [...revs].map(([id, rev]) => ({ _id: id, _rev: rev, type: "item", n: round, body })));
    revs = new Map(res.flatMap((r) => (r.ok ? [[r.id, r.rev] as [string, string]] : [])));
    await onRound?.();
  }
};

export const daemonContract = (name: string, makeHarness: () => Promise<DaemonHarness>, options: DaemonContractOptions = {}): void => {
  const { docs, rounds } = options.grow ?? { docs: 300, rounds: 8 };
  const fallTimeoutMs = options.sizeFallTimeoutMs ?? 30_000;
  const testTimeoutMs = options.testTimeoutMs ?? 60_000;

  /** Peak `sizes.file` while growing, so a compaction during the growth does not hide the fall. */
  const growAndPeak = async (h: DaemonHarness, db: string): Promise<number> => {
    let peak = 0;
    await grow(h.store, db, docs, rounds, async () => {
      peak = Math.max(peak, (await h.store.dbInfo(db))?.fileBytes ?? 0);
    });
    return peak;
  };

  const fallFactor = options.fallFactor ?? 0.5;
  const compactedBelow = async (h: DaemonHarness, run: Running, db: string, peakBytes: number) => {
    let last: string | undefined;
    try {
      return await waitFor(
        async () => {
          const info = await h.store.dbInfo(db);
          last = `${info?.fileBytes ?? "?"} bytes, ${jobsFor(run, "db", db).length} jobs`;
          if (jobsFor(run, "db", db).length === 0) return undefined;
          // 0 is "no size reported right now" (PouchDB Server, for a moment), not a fall.
          return info !== undefined && !info.compactionRunning && info.fileBytes > 0 && info.fileBytes < peakBytes * fallFactor ? info : undefined;
        },
        `upholster to compact ${db} by itself and sizes.file to fall below ${Math.round(peakBytes * fallFactor)} bytes`,
        fallTimeoutMs,
        100,
      );
    } catch (error) {
      throw new Error(`${String(error)} (last seen: ${last ?? "nothing"})`);
    }
  };

  describe(`daemon contract: ${name}`, () => {
    it("a db grown with writes and updates qualifies; upholster compacts it by itself and sizes.file falls", async () => {
      const h = await makeHarness();
      const run = await startUpholster(h);
      try {
        const db = unique("grow");
        await h.createDb(db);
        const peak = await growAndPeak(h, db);
        await compactedBelow(h, run, db, peak);
        expect(jobsFor(run, "db", db, "started").length).toBeGreaterThanOrEqual(1);
        expect(run.upholster.smoosh.isRunning()).toBe(true);
        await h.deleteDb(db);
      } finally {
        await run.stop();
        await h.close();
      }
    }, testTimeoutMs);

    it.skipIf(options.noViewCompaction !== undefined)(
      `a view index grown by updates is compacted by upholster by itself${options.noViewCompaction === undefined ? "" : ` (skipped: ${options.noViewCompaction})`}`,
      async () => {
        const h = await makeHarness();
        const run = await startUpholster(h);
        try {
          const db = unique("view");
          await h.createDb(db);
          await h.store.bulkDocs(db, [{ _id: "_design/d", views: { v: { map: "function (doc) { if (doc.type === 'item') { emit(doc.n, doc.body); } }" } } }]);
          // Each round rewrites every doc and rebuilds the index: old b-tree nodes become garbage.
          await grow(h.store, db, 200, 5, () => h.buildViews(db, "_design/d", "v"));
          const before = await waitFor(async () => {
            const info = await h.store.viewIndexInfo(db, "_design/d");
            return info !== undefined && info.fileBytes > 2 * info.activeBytes ? info : undefined;
          }, "a view index with garbage");
          // One more write: its event makes upholster look at the views again, now that the index is built.
          await h.store.bulkDocs(db, [{ _id: "trigger" }]);
          await waitFor(
            async () => {
              if (jobsFor(run, "view", db).length === 0) return undefined;
              const info = await h.store.viewIndexInfo(db, "_design/d");
              return info !== undefined && !info.compactionRunning && info.fileBytes > 0 && info.fileBytes < before.fileBytes ? info : undefined;
            },
            "upholster to compact the view index by itself and its file to shrink",
            fallTimeoutMs,
            100,
          );
          await h.deleteDb(db);
        } finally {
          await run.stop();
          await h.close();
        }
      },
      testTimeoutMs,
    );

    it("view cleanup runs by itself after a design doc change", async () => {
      const h = await makeHarness();
      const run = await startUpholster(h);
      try {
        const db = unique("cleanup");
        await h.createDb(db);
        const [put] = await h.store.bulkDocs(db, [{ _id: "_design/d", views: { v: { map: "function (doc) { emit(doc._id, null); }" } } }, { _id: "a" }]);
        expect(put?.ok).toBe(true);
        await h.buildViews(db, "_design/d", "v");
        // Whatever the first sight of the ddoc caused is over before the change.
        await waitFor(() => run.seen.some((e) => e.db === db), "upholster to see the db");
        await waitFor(() => run.upholster.smoosh.jobs().every((j) => j.object.db !== db) && run.upholster.smooshStatus().channels["index_cleanup"]?.waiting.size === 0, "no cleanup pending");
        const cleanupsBefore = jobsFor(run, "cleanup", db).length;
        const ddoc = await h.store.getDoc(db, "_design/d");
        await h.store.bulkDocs(db, [{ ...(ddoc ?? { _id: "_design/d" }), views: { v2: { map: "function (doc) { emit(doc._id, 1); }" } } }]);
        const cleanup = await waitFor(() => jobsFor(run, "cleanup", db).slice(cleanupsBefore)[0], "upholster to run view cleanup after the design doc change", fallTimeoutMs);
        expect(await cleanup.handle.done).toEqual(expect.objectContaining({ ok: true }));
        await h.deleteDb(db);
      } finally {
        await run.stop();
        await h.close();
      }
    }, testTimeoutMs);

    it.skipIf(options.noAdoption !== undefined)(
      `a compaction already running (started by someone else) is adopted, not started twice${options.noAdoption === undefined ? "" : ` (skipped: ${options.noAdoption})`}`,
      async () => {
        const h = await makeHarness();
        const run = await startUpholster(h);
        try {
          const db = unique("adopt");
          await h.createDb(db);
          // Held back while the db grows, so the only compaction is the one started by "someone else".
          run.upholster.suspend();
          await grow(h.store, db, docs, rounds);
          await waitFor(() => Object.values(run.upholster.smooshStatus().channels).some((c) => c.waiting.size > 0), "the db queued in a channel");
          const byHand = await h.store.startJob({ kind: "db", db });
          // Let the checks in flight land first: resume then often comes in the same millisecond
          // as their answers, which read the store before the compaction by hand began and must
          // not stand in for the precheck (they did, when "answered in this step" was judged by
          // an equal timestamp: upholster started, the store handed back the running job).
          await run.upholster.smoosh.whenIdle();
          run.upholster.resume();
          const adopted = await waitFor(() => jobsFor(run, "db", db, "adopted")[0], "upholster to adopt the running compaction", fallTimeoutMs).catch((e: unknown) => {
            throw new Error(`${String(e)}; metrics ${JSON.stringify(run.upholster.metrics().smoosh)}; jobs ${JSON.stringify(run.jobs.map((j) => [j.how, j.object]))}; log ${run.logText()}`);
          });
          const [mine, theirs] = await Promise.all([byHand.done, adopted.handle.done]);
          expect(mine.ok).toBe(true);
          expect(theirs.ok).toBe(true);
          expect(jobsFor(run, "db", db, "started")).toEqual([]);
          await waitFor(() => run.upholster.metrics().smoosh.adopted >= 1 && run.upholster.smoosh.jobs().every((j) => j.object.db !== db), "the adopted job to end in the daemon");
          await h.deleteDb(db);
        } finally {
          await run.stop();
          await h.close();
        }
      },
      testTimeoutMs,
    );

    it("restart of upholster mid-feed: a db written while it was stopped is seen and compacted by the next instance", async () => {
      const h = await makeHarness();
      const db = unique("restart");
      const first = await startUpholster(h);
      try {
        await h.createDb(db);
        await h.store.bulkDocs(db, [{ _id: "before-stop" }]);
        await waitFor(() => first.seen.some((e) => e.db === db), "the first instance to see the db");
      } finally {
        await first.stop();
      }
      // Written while no upholster runs: only the saved feed position can tell the next instance.
      const peak = await growAndPeak(h, db);
      const second = await startUpholster(h);
      try {
        await waitFor(() => second.seen.some((e) => e.type === "db-updated" && e.db === db), "the next instance to see the update made while stopped");
        await compactedBelow(h, second, db, peak);
        expect(jobsFor(first, "db", db)).toEqual([]);
        await h.deleteDb(db);
      } finally {
        await second.stop();
        await h.close();
      }
    }, testTimeoutMs);

    it("the server going away and coming back: the daemon keeps running, then resumes by itself", async () => {
      const h = await makeHarness();
      const run = await startUpholster(h);
      try {
        const db = unique("outage");
        await h.createDb(db);
        await h.store.bulkDocs(db, [{ _id: "before" }]);
        await waitFor(() => run.seen.some((e) => e.db === db), "the db seen before the outage");
        await h.cut();
        await waitFor(() => !run.upholster.status().events.connected, "status to show the outage");
        expect(run.upholster.smoosh.isRunning()).toBe(true);
        await h.restore();
        await waitFor(() => run.upholster.status().events.connected, "status connected again");
        const peak = await growAndPeak(h, db);
        await compactedBelow(h, run, db, peak);
        expect(run.upholster.smoosh.isRunning()).toBe(true);
        await h.deleteDb(db);
      } finally {
        await h.restore();
        await run.stop();
        await h.close();
      }
    }, testTimeoutMs);
  });
};
