/**
 * The compaction daemon on a VirtualScheduler and the in-memory store: the
 * same runtime code as production, time moved by the test.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createMemoryStatePort } from "../../src/adapters/state/index.js";
import type { CompactionStore } from "../../src/ports/store.js";
import { createMemoryStore } from "../../src/adapters/memory/index.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";
import { advanceUntil, fileBytesOf, growGarbage, makeWorld, START_MS } from "./world.js";

const WAIT_SECS = 30;

describe("compaction daemon", () => {
  it("compacts a db that grew garbage once wait_secs has passed, and its file shrinks", async () => {
    const world = makeWorld();
    growGarbage(world.store, "grown"); // before start: found by the start-up scan
    const before = await fileBytesOf(world.store, "grown");
    const active = (await world.store.dbInfo("grown"))?.activeBytes ?? 0;
    expect(before / active).toBeGreaterThan(2); // qualifies for ratio_dbs (min_priority 2.0)
    await world.daemon.start();
    world.store.putDoc("grown", { _id: "one-more" }); // a write: smoosh checks the db and queues it

    // Channels start paused: nothing may start inside wait_secs.
    await world.scheduler.advanceByAsync(WAIT_SECS * 1000 - 1);
    await world.daemon.whenIdle();
    expect(world.jobCalls).toEqual([]);
    expect(world.daemon.status().channels["ratio_dbs"]?.waiting.size).toBe(1);

    expect(await advanceUntil(world, () => world.daemon.metrics().finished >= 1)).toBe(true);
    expect(world.jobCalls[0]?.object).toEqual({ kind: "db", db: "grown" });
    expect(world.jobCalls[0]!.atMs).toBeGreaterThanOrEqual(START_MS + WAIT_SECS * 1000);
    const after = await fileBytesOf(world.store, "grown");
    expect(after).toBeLessThan(before / 2);
    expect(world.daemon.metrics().bytesReclaimed).toBeGreaterThan(0);
    expect(world.logger.lines.some((l) => l.fields["subsystem"] === "smoosh")).toBe(true);
    await world.daemon.stop();
  });

  it("adopts a compaction someone else started instead of starting a second one", async () => {
    const world = makeWorld({ ini: { smoosh: { wait_secs: "0" } } });
    growGarbage(world.store, "busy", 3000, 4);
    // An operator's POST /busy/_compact, running when smoosh looks at the db.
    const theirs = await world.store.startJob({ kind: "db", db: "busy" });
    await world.daemon.start();
    world.daemon.enqueue("busy");
    expect(await advanceUntil(world, () => world.daemon.metrics().finished >= 1, 100)).toBe(true);
    expect(world.jobCalls.map((c) => c.adopt)).toEqual([true]);
    expect(world.daemon.metrics().adopted).toBe(1);
    expect((await theirs.done).ok).toBe(true);
    await world.daemon.stop();
  });

  it("a db that grows while the daemon runs is compacted once it qualifies (re-checked after staleness)", async () => {
    const world = makeWorld();
    await world.daemon.start();
    world.store.createDb("growing");
    const revs = new Map<string, string>();
    let round = 0;
    // 300 docs rewritten every 10 virtual seconds: the file grows, live data does not.
    const writeRound = () => {
      const results = world.store.writeDocs(
        "growing",
        Array.from({ length: 300 }, (_, i) => ({ _id: `d${i}`, _rev: revs.get(`d${i}`), round, pad: "y".repeat(800) })),
      );
      for (const r of results) if (r.ok) revs.set(r.id, r.rev);
      round++;
    };
    const compacted = await advanceUntil(
      world,
      () => {
        if (world.daemon.metrics().finished >= 1) return true;
        writeRound();
        return false;
      },
      10_000,
      120,
    );
    expect(compacted).toBe(true);
    const info = await world.store.dbInfo("growing");
    expect(info!.fileBytes / info!.activeBytes).toBeLessThan(2);
    // Found no later than staleness (5 min) + the time to qualify, not at the first (tiny) write.
    expect(world.jobCalls[0]!.atMs - START_MS).toBeLessThanOrEqual(20 * 60_000);
    await world.daemon.stop();
  });

  it("backs off after failures, then succeeds (never a fixed 2 s loop)", async () => {
    const world = makeWorld({ ini: { smoosh: { wait_secs: "0", retry_initial_secs: "5", retry_max_secs: "3600" } } });
    growGarbage(world.store, "flaky");
    world.store.failNextJobs("flaky", 2, "disk full");
    await world.daemon.start();
    world.daemon.enqueue("flaky");
    expect(await advanceUntil(world, () => world.daemon.metrics().finished >= 1)).toBe(true);
    expect(world.daemon.metrics().failed).toBe(2);
    const starts = world.jobCalls.filter((c) => !c.adopt).map((c) => c.atMs);
    expect(starts).toHaveLength(3);
    // The gaps grow: 5 s then 10 s at least (plus the check before each start).
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(5000);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(10_000);
    expect(world.logger.lines.some((l) => JSON.stringify(l).includes("disk full"))).toBe(true);
    await world.daemon.stop();
  });

  it("persists queues and restores them after a restart", async () => {
    const state = createMemoryStatePort();
    const ini = { smoosh: { persist: "true", checkpoint_secs: "10" } };
    const first = makeWorld({ ini, state });
    growGarbage(first.store, "queued-a");
    growGarbage(first.store, "queued-b", 1200, 4);
    await first.daemon.start();
    first.daemon.suspend(); // keep them queued
    first.daemon.enqueue("queued-a");
    first.daemon.enqueue("queued-b");
    expect(await advanceUntil(first, () => first.daemon.status().channels["ratio_dbs"]?.waiting.size === 2)).toBe(true);
    expect(await advanceUntil(first, () => state.keys().includes("smoosh"))).toBe(true);
    await first.daemon.stop();

    const second = makeWorld({ ini, state, scheduler: first.scheduler, store: first.store });
    await second.daemon.start();
    await second.daemon.whenIdle();
    expect(second.daemon.status().channels["ratio_dbs"]?.waiting.size).toBe(2);
    await second.daemon.stop();
  });

  it("ignores a saved state that does not decode, logs it, and starts empty", async () => {
    const state = createMemoryStatePort({ smoosh: { version: 99, channels: "nope" } });
    const world = makeWorld({ ini: { smoosh: { persist: "true" } }, state });
    await world.daemon.start();
    await world.daemon.whenIdle();
    expect(world.daemon.isRunning()).toBe(true);
    expect(world.logger.find("does not decode")).toHaveLength(1);
    expect(Object.values(world.daemon.status().channels).every((c) => c.waiting.size === 0)).toBe(true);
    await world.daemon.stop();
  });

  it("batches db info fetches issued together through dbInfos", async () => {
    let dbInfosCalls = 0;
    let dbInfoCalls = 0;
    const world = makeWorld({
      wrapStore: (store): CompactionStore => ({
        ...store,
        dbInfo: (db) => {
          dbInfoCalls++;
          return store.dbInfo(db);
        },
        dbInfos: (dbs) => {
          dbInfosCalls++;
          return store.dbInfos!(dbs);
        },
      }),
    });
    for (let i = 0; i < 6; i++) world.store.createDb(`small-${i}`);
    await world.daemon.start();
    world.daemon.enqueueAll("dbs");
    expect(await advanceUntil(world, () => world.daemon.metrics().enqueued + dbInfosCalls > 0 && dbInfosCalls > 0)).toBe(true);
    expect(dbInfosCalls).toBeGreaterThan(0);
    expect(dbInfoCalls).toBeLessThan(6);
    await world.daemon.stop();
  });

  it("packs its db checks to the store's dbInfosBatchSize, and to a smaller one the store learns while running (CouchDB's too_many_keys)", async () => {
    const SERVER_LIMIT = 10;
    const asked: number[] = [];
    let learnt: number | undefined;
    const world = makeWorld({
      ini: { smoosh: { wait_secs: "0" } },
      // As the CouchDB adapter does: a refused batch is split, and the smaller size kept.
      wrapStore: (store): CompactionStore => ({
        ...store,
        get dbInfosBatchSize() {
          return learnt;
        },
        dbInfos: async (dbs) => {
          asked.push(dbs.length);
          if (dbs.length > SERVER_LIMIT) learnt = SERVER_LIMIT;
          const out = new Map();
          for (let i = 0; i < dbs.length; i += SERVER_LIMIT) for (const [db, info] of await store.dbInfos!(dbs.slice(i, i + SERVER_LIMIT))) out.set(db, info);
          return out;
        },
      }),
    });
    for (let i = 0; i < 40; i++) world.store.createDb(`small-${i}`);
    await world.daemon.start();
    expect(world.daemon.inspect().config.dbsPerInfoRequest).toBe(100);
    world.daemon.enqueueAll("dbs");
    expect(await advanceUntil(world, () => asked.length > 0)).toBe(true);
    await world.daemon.whenIdle();
    expect(asked[0]).toBe(40);
    expect(world.daemon.inspect().config.dbsPerInfoRequest).toBe(SERVER_LIMIT);
    const before = asked.length;
    world.daemon.enqueueAll("dbs");
    expect(await advanceUntil(world, () => asked.length >= before + 4)).toBe(true);
    expect(asked.slice(before).every((n) => n <= SERVER_LIMIT)).toBe(true);
    await world.daemon.stop();
  });

  it("for a store that sees a job end by reading the db (jobLookIntervalMs), reads each running db every interval with the channel's next db, whose start then needs no read of its own", async () => {
    const reads: { atMs: number; dbs: readonly string[] }[] = [];
    const starts: { atMs: number; db: string }[] = [];
    const world = makeWorld({
      ini: { smoosh: { wait_secs: "0" } },
      wrapStore: (store): CompactionStore => ({
        ...store,
        jobLookIntervalMs: 1_000,
        dbInfo: (db) => {
          reads.push({ atMs: world.scheduler.nowMs(), dbs: [db] });
          return store.dbInfo(db);
        },
        dbInfos: (dbs) => {
          reads.push({ atMs: world.scheduler.nowMs(), dbs });
          return store.dbInfos!(dbs);
        },
        startJob: (object) => {
          starts.push({ atMs: world.scheduler.nowMs(), db: object.db });
          return store.startJob(object);
        },
      }),
    });
    const dbs = ["big-1", "big-2", "big-3"];
    for (const db of dbs) growGarbage(world.store, db, 3000, 4);
    await world.daemon.start();
    expect(world.daemon.inspect().config.jobLookIntervalMs).toBe(1_000);
    world.daemon.reconfigure(world.daemon.inspect().config);
    expect(world.daemon.inspect().config.jobLookIntervalMs).toBe(1_000); // kept across a config change
    for (const db of dbs) world.daemon.enqueue(db);
    expect(await advanceUntil(world, () => world.daemon.metrics().finished >= 3, 100, 1_000)).toBe(true);
    expect(starts.map((s) => s.db).sort()).toEqual(dbs);
    // Later starts stood on the look that carried them along, not on a read of their own.
    const onALook = starts.slice(1).filter((s) => !reads.some((r) => r.atMs === s.atMs && r.dbs.includes(s.db)));
    expect(onALook.length).toBeGreaterThan(0);
    for (const start of onALook) {
      const look = reads.filter((r) => r.dbs.includes(start.db) && r.atMs < start.atMs).at(-1);
      expect(look, `no look carried ${start.db}`).toBeDefined();
      expect(start.atMs - look!.atMs).toBeLessThanOrEqual(1_000);
      expect(look!.dbs.length).toBeGreaterThan(1); // with the running db it looked at
    }
    await world.daemon.stop();
  });

  it("while a long compaction fills the channel, a db that channel would take waits for the next start instead of spending checks, and is compacted after it", async () => {
    const reads: { atMs: number; dbs: readonly string[] }[] = [];
    const jobs: { db: string; startMs: number; endMs?: number }[] = [];
    const scheduler = new VirtualScheduler({ startMs: START_MS });
    // A slow disk: compacting `big` takes minutes of virtual time.
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false, model: { compactionBytesPerMs: 20 } });
    const world = makeWorld({
      scheduler,
      store,
      ini: { smoosh: { wait_secs: "0" } },
      wrapStore: (inner): CompactionStore => ({
        ...inner,
        dbInfos: (dbs) => {
          reads.push({ atMs: scheduler.nowMs(), dbs });
          return inner.dbInfos!(dbs);
        },
        startJob: async (object) => {
          const job: (typeof jobs)[number] = { db: object.db, startMs: scheduler.nowMs() };
          jobs.push(job);
          const handle = await inner.startJob(object);
          void handle.done.then(() => (job.endMs = scheduler.nowMs()));
          return handle;
        },
      }),
    });
    growGarbage(store, "big", 3000, 4);
    store.createDb("hot");
    const revs = new Map<string, string>();
    const writeHot = () => {
      const batch = Array.from({ length: 200 }, (_, i) => ({ _id: `d${i}`, _rev: revs.get(`d${i}`), pad: "y".repeat(300) }));
      for (const r of store.writeDocs("hot", batch)) if (r.ok) revs.set(r.id, r.rev);
    };
    writeHot();
    await world.daemon.start();
    world.daemon.enqueue("big");
    expect(await advanceUntil(world, () => jobs.length === 1, 100)).toBe(true);
    // `hot` gains garbage every second while `big` compacts: it qualifies for ratio_dbs within seconds.
    for (let second = 0; second < 60; second++) {
      writeHot();
      await scheduler.advanceByAsync(1_000);
      await world.daemon.whenIdle();
    }
    expect(await advanceUntil(world, () => jobs.length === 2 && jobs[1]!.endMs !== undefined, 1_000, 1_000)).toBe(true);
    const [big, hot] = jobs;
    expect(big!.db).toBe("big");
    expect(hot!.db).toBe("hot");
    expect(big!.endMs! - big!.startMs).toBeGreaterThan(60_000); // the whole write spell fell inside it
    // While `big` ran: a first look at `hot` and the probe that learnt its growth (after 3 updates, or 5 s at
    // the latest), then nothing of its own, though it crossed ratio 2 (without the rule: a read 14 s in).
    const hotReadsDuringBig = reads.filter((r) => r.dbs.includes("hot") && r.atMs > big!.startMs && r.atMs < big!.endMs!);
    expect(hotReadsDuringBig.length).toBeGreaterThan(0);
    for (const read of hotReadsDuringBig) expect(read.atMs - big!.startMs).toBeLessThanOrEqual(5_000);
    // It started on the read that followed big's end, and was compacted.
    expect(hot!.startMs).toBeGreaterThanOrEqual(big!.endMs!);
    expect(hot!.startMs - big!.endMs!).toBeLessThanOrEqual(1_000);
    const info = await store.dbInfo("hot");
    expect(info!.fileBytes / info!.activeBytes).toBeLessThan(2);
    await world.daemon.stop();
  });

  it("one db whose info always fails does not stop the others", async () => {
    const world = makeWorld({
      ini: { smoosh: { wait_secs: "0" } },
      wrapStore: (store): CompactionStore => ({
        ...store,
        dbInfos: undefined,
        dbInfo: (db) => (db === "broken" ? Promise.reject(new Error("shard map unreadable")) : store.dbInfo(db)),
      }),
    });
    growGarbage(world.store, "broken", 800, 4);
    growGarbage(world.store, "healthy", 800, 4);
    await world.daemon.start();
    world.daemon.enqueue("broken");
    world.daemon.enqueue("healthy");
    expect(await advanceUntil(world, () => world.daemon.metrics().finished >= 1)).toBe(true);
    expect(world.jobCalls.map((c) => c.object.db)).toEqual(["healthy"]);
    expect(world.daemon.isRunning()).toBe(true);
    await world.daemon.stop();
  });

  it("stop() leaves no timer behind", async () => {
    const world = makeWorld();
    await world.daemon.start();
    growGarbage(world.store, "a", 200, 1);
    await world.daemon.whenIdle();
    await world.daemon.stop();
    const pending = world.scheduler.pendingTimers();
    await world.scheduler.advanceByAsync(3_600_000);
    expect(world.jobCalls).toEqual([]);
    expect(world.scheduler.pendingTimers()).toBeLessThanOrEqual(pending);
  });

  it("property: whatever dbs are written, concurrency per channel is never exceeded and every qualifying db ends compacted", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ docs: fc.integer({ min: 50, max: 1500 }), rounds: fc.integer({ min: 0, max: 5 }) }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 2 }),
        async (dbs, concurrency) => {
          const world = makeWorld({
            ini: {
              smoosh: { wait_secs: "0", db_channels: "ratio_dbs" },
              "smoosh.ratio_dbs": { concurrency: String(concurrency) },
            },
          });
          dbs.forEach((db, i) => growGarbage(world.store, `db-${i}`, db.docs, db.rounds, 400));
          await world.daemon.start();
          const qualifying: string[] = [];
          for (const [i] of dbs.entries()) {
            const info = await world.store.dbInfo(`db-${i}`);
            if (info !== undefined && info.fileBytes > 1_048_576 && info.activeBytes > 0 && info.fileBytes / info.activeBytes > 2.0) qualifying.push(`db-${i}`);
          }
          let maxRunning = 0;
          const quiet = await advanceUntil(
            world,
            () => {
              const running = world.daemon.status().channels["ratio_dbs"]!;
              maxRunning = Math.max(maxRunning, running.active + running.starting, world.store.activeTasks().length);
              return world.daemon.metrics().finished >= qualifying.length && running.waiting.size === 0 && running.active === 0;
            },
            250,
            2000,
          );
          await world.daemon.stop();
          expect(quiet).toBe(true);
          expect(maxRunning).toBeLessThanOrEqual(concurrency);
          const compacted = [...new Set(world.jobCalls.map((c) => c.object.db))].sort();
          expect(compacted).toEqual([...qualifying].sort());
        },
      ),
      { numRuns: 12 },
    );
  });
});
