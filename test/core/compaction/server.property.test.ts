import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { channelPriority } from "../../../src/core/compaction/priority.js";
import { objectKey, type CompactionObject, type ObjectInfo } from "../../../src/core/compaction/index.js";
import { configFrom, Sim } from "./harness.js";

const DBS = ["a", "b", "c", "d", "e"];
const DDOCS = ["_design/x", "_design/y"];
const OBJECTS: CompactionObject[] = DBS.flatMap((db) => [
  { kind: "db" as const, db },
  { kind: "cleanup" as const, db },
  ...DDOCS.map((ddoc) => ({ kind: "view" as const, db, ddoc })),
]);

const infoArb = (object: CompactionObject): fc.Arbitrary<ObjectInfo | "missing"> => {
  if (object.kind === "cleanup") return fc.constantFrom<ObjectInfo | "missing">({ kind: "cleanup" }, { kind: "cleanup" }, "missing");
  const sizes = fc.record({
    fileBytes: fc.integer({ min: 0, max: 4 * 1024 ** 3 }),
    activeBytes: fc.integer({ min: 0, max: 1024 ** 3 }),
    needsUpgrade: fc.boolean(),
    compactionRunning: fc.boolean(),
  });
  return object.kind === "db"
    ? sizes.map((s) => ({ kind: "db" as const, ...s, updateSeq: 10, compactedSeq: undefined }))
    : sizes.map((s) => ({ kind: "view" as const, ...s }));
};
/** One info per object for the whole run. */
const infosArb = fc.tuple(...OBJECTS.map(infoArb)).map((infos) => {
  const table = new Map<string, ObjectInfo | "missing">();
  OBJECTS.forEach((o, i) => table.set(objectKey(o), infos[i] ?? "missing"));
  return (o: CompactionObject) => table.get(objectKey(o)) ?? "missing";
});

const clock = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 30)).map(([h, m]) => `${h}:${String(m).padStart(2, "0")}`);
const channelIni = fc
  .record({
    concurrency: fc.integer({ min: 0, max: 3 }),
    capacity: fc.integer({ min: 1, max: 6 }),
    window: fc.option(fc.tuple(clock, clock), { freq: 2 }),
    strict: fc.boolean(),
  })
  .map(({ concurrency, capacity, window, strict }) => ({
    concurrency: String(concurrency),
    capacity: String(capacity),
    ...(window === null ? {} : { from: window[0], to: window[1], strict_window: String(strict) }),
  }));
const iniArb = fc
  .record({
    ratio_dbs: channelIni,
    slack_dbs: channelIni,
    upgrade_dbs: channelIni,
    ratio_views: channelIni,
    upgrade_views: channelIni,
    index_cleanup: channelIni,
    ignored: fc.subarray(DBS, { maxLength: 2 }),
    waitSecs: fc.integer({ min: 0, max: 60 }),
    maxInfo: fc.integer({ min: 1, max: 3 }),
    maxPending: fc.integer({ min: 1, max: 10 }),
    staleness: fc.integer({ min: 0, max: 5 }),
  })
  .map(({ ignored, waitSecs, maxInfo, maxPending, staleness, ...channels }) => ({
    smoosh: {
      db_channels: "upgrade_dbs,ratio_dbs,slack_dbs",
      view_channels: "upgrade_views,ratio_views",
      wait_secs: String(waitSecs),
      max_info_requests: String(maxInfo),
      max_pending_checks: String(maxPending),
      staleness: String(staleness),
      retry_initial_secs: "1",
      retry_max_secs: "30",
      retry_max_attempts: "3",
      cleanup_index_files: "true",
      rescan_interval: "7200",
      persist: "true",
      checkpoint_secs: "1800",
    },
    "smoosh.ignore": Object.fromEntries(ignored.map((db) => [db, "true"])),
    ...Object.fromEntries(Object.entries(channels).map(([name, settings]) => [`smoosh.${name}`, settings])),
  }));

type Action =
  | { t: "update"; object: number; force: boolean }
  | { t: "ddoc"; db: number; ddoc: number }
  | { t: "answer"; index: number; ok: boolean }
  | { t: "advance"; ms: number }
  | { t: "suspend" }
  | { t: "resume" }
  | { t: "flush" }
  | { t: "deleted"; db: number }
  | { t: "enqueue-all"; scope: "dbs" | "views" }
  | { t: "retune"; stalenessMinutes: number; minCheckIntervalMs: number; maxCheckIntervalSecs: number; capacity: number };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant("update" as const), object: fc.nat(), force: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("ddoc" as const), db: fc.nat(), ddoc: fc.nat() }) },
  { weight: 12, arbitrary: fc.record({ t: fc.constant("answer" as const), index: fc.nat(), ok: fc.oneof(fc.constant(true), fc.boolean()) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("advance" as const), ms: fc.oneof(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 3 * 3600_000 })) }) },
  { weight: 1, arbitrary: fc.constant({ t: "suspend" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "resume" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "flush" as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("deleted" as const), db: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("enqueue-all" as const), scope: fc.constantFrom("dbs" as const, "views" as const) }) },
  // The check policy's settings and the queues' capacities change while objects are dirty and scheduled.
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("retune" as const),
      stalenessMinutes: fc.integer({ min: 0, max: 5 }),
      minCheckIntervalMs: fc.integer({ min: 0, max: 10_000 }),
      maxCheckIntervalSecs: fc.integer({ min: 1, max: 600 }),
      capacity: fc.integer({ min: 1, max: 6 }),
    }),
  },
);

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length] as T;

const run = (sim: Sim, actions: readonly Action[]): void => {
  for (const a of actions) {
    switch (a.t) {
      case "update":
        sim.send({ type: "object-updated", object: pick(OBJECTS, a.object), force: a.force });
        break;
      case "ddoc":
        sim.send({ type: "design-doc-updated", db: pick(DBS, a.db), ddoc: pick(DDOCS, a.ddoc) });
        break;
      case "answer":
        sim.answer(a.index, a.ok);
        break;
      case "advance":
        sim.advance(a.ms);
        break;
      case "deleted":
        sim.send({ type: "db-deleted", db: pick(DBS, a.db) });
        break;
      case "enqueue-all":
        sim.send({ type: "enqueue-all", scope: a.scope });
        break;
      case "retune": {
        // Same channels, concurrency, windows and ignored dbs (what the start checks read); new policy settings and capacities.
        const { stalenessMinutes, minCheckIntervalMs, maxCheckIntervalSecs, capacity } = a;
        const channels = Object.fromEntries(Object.entries(sim.config.channels).map(([name, channel]) => [name, { ...channel, capacity }]));
        sim.send({ type: "config-changed", config: { ...sim.config, stalenessMinutes, minCheckIntervalMs, maxCheckIntervalSecs, channels } });
        break;
      }
      default:
        sim.send({ type: a.t });
    }
  }
};

describe("the reducer under random event sequences", () => {
  it("never exceeds concurrency, starts outside a window or during wait_secs or while suspended, starts an ignored db, or runs an object twice", () => {
    // Coverage counters: the property must really exercise starts in windowed channels and adoptions.
    let starts = 0;
    let windowedStarts = 0;
    let strictSuspends = 0;
    fc.assert(
      fc.property(iniArb, infosArb, fc.array(actionArb, { minLength: 60, maxLength: 200 }), (ini, infoOf, actions) => {
        const sim = new Sim(configFrom(ini), infoOf, DBS, () => DDOCS);
        run(sim, actions);
        // Harness checks ran at every start; also the bookkeeping agrees with the shell's view.
        expect(sim.effectsOf("start-job").length).toBe(sim.starts.length);
        const metrics = sim.state.metrics;
        expect(metrics.started + metrics.adopted).toBeLessThanOrEqual(sim.starts.length);
        starts += sim.starts.length;
        windowedStarts += sim.starts.filter((s) => sim.config.channels[s.channel]?.window !== undefined).length;
        strictSuspends += sim.effectsOf("suspend-job").length;
      }),
    );
    console.log({ starts, windowedStarts, strictSuspends });
    expect(windowedStarts).toBeGreaterThan(50);
    expect(strictSuspends).toBeGreaterThan(10);
  });

  it("back-off delays for one object are non-decreasing and capped, and it gives up", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 6 }), (initial, max, attempts) => {
        const config = configFrom({
          smoosh: {
            db_channels: "ratio_dbs",
            view_channels: "",
            cleanup_channels: "",
            wait_secs: "0",
            rescan_interval: "0",
            retry_initial_secs: String(initial),
            retry_max_secs: String(max),
            retry_max_attempts: String(attempts),
          },
        });
        const info: ObjectInfo = { kind: "db", fileBytes: 1e9, activeBytes: 1e8, updateSeq: 1, needsUpgrade: false, compactionRunning: false };
        const sim = new Sim(config, () => info);
        sim.send({ type: "object-updated", object: { kind: "db", db: "a" } });
        // Fail every start until the core gives up.
        for (let i = 0; i < 1000 && sim.state.metrics.gaveUp === 0; i++) {
          if (sim.outstanding.length > 0) sim.answer(0, sim.outstanding[0]?.kind === "fetch");
          else if (sim.tickAtMs !== undefined) sim.advance(sim.tickAtMs - sim.nowMs);
          else break;
        }
        const delays = sim.effectsOf("log").filter((l) => l.msg === "smoosh: will retry").map((l) => l.fields["delayMs"] as number);
        expect(delays).toHaveLength(attempts);
        expect(sim.state.metrics.gaveUp).toBe(1);
        expect(delays[0]).toBe(Math.min(initial, max) * 1000);
        delays.forEach((d, i) => {
          expect(d).toBeLessThanOrEqual(max * 1000);
          if (i > 0) expect(d).toBeGreaterThanOrEqual(delays[i - 1] ?? 0);
        });
        // The retries really waited: starts are at least the delay apart.
        const startTimes = sim.starts.map((s) => s.atMs);
        for (let i = 1; i < startTimes.length; i++) {
          expect((startTimes[i] ?? 0) - (startTimes[i - 1] ?? 0)).toBeGreaterThanOrEqual(delays[i - 1] ?? 0);
        }
      }),
    );
  });

  it("every object some channel takes is eventually started when channels have room", () => {
    fc.assert(
      fc.property(infosArb, fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 }), fc.subarray(OBJECTS), (infoOf, concurrency, maxInfo, updated) => {
        const channel = { concurrency: String(concurrency), capacity: "100" };
        const config = configFrom({
          smoosh: { rescan_interval: "0", max_info_requests: String(maxInfo), wait_secs: "30" },
          "smoosh.ratio_dbs": channel,
          "smoosh.slack_dbs": channel,
          "smoosh.upgrade_dbs": channel,
          "smoosh.ratio_views": channel,
          "smoosh.slack_views": channel,
          "smoosh.upgrade_views": channel,
          "smoosh.index_cleanup": channel,
        });
        const sim = new Sim(config, infoOf);
        for (const object of updated) sim.send({ type: "object-updated", object });
        sim.runToQuiescence();
        const channelsOfKind = (o: CompactionObject) =>
          Object.values(config.channels).filter((c) => c.kind === o.kind);
        for (const object of updated) {
          const info = infoOf(object);
          const eligible = info !== "missing" && channelsOfKind(object).some((c) => channelPriority(c, info) > 0);
          const starts = sim.starts.filter((s) => objectKey(s.object) === objectKey(object));
          expect(starts.length > 0, `${JSON.stringify(object)} ${JSON.stringify(info)}`).toBe(eligible);
          if (eligible && typeof info === "object" && info.kind !== "cleanup") expect(starts[0]?.adopt).toBe(info.compactionRunning);
        }
        expect(sim.state.metrics.finished).toBe(sim.starts.length);
      }),
    );
  });

  it("a rescan lists a db's design docs unless the daemon knows it has none: heard created (empty) or listed with none, and no design doc event since", () => {
    const eventArb = fc.record({ type: fc.constantFrom("db-created", "db-deleted", "design-doc-updated", "rescan"), db: fc.constantFrom(...DBS) });
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 30 }), fc.subarray(DBS), (events, withDdocs) => {
        const sim = new Sim(configFrom({ smoosh: { rescan_interval: "0", wait_secs: "0" } }), () => "missing", DBS, (db) => (withDdocs.includes(db) ? ["_design/x"] : []));
        // The model: what the daemon knows of each db's design docs (undefined: nothing).
        const known = new Map<string, boolean>();
        for (const event of events) {
          if (event.type === "rescan") {
            const before = sim.effectsOf("list-design-docs").length;
            sim.send({ type: "events-missed" });
            sim.runToQuiescence();
            const listed = sim.effectsOf("list-design-docs").slice(before).map((e) => e.db).sort();
            expect(listed).toEqual(DBS.filter((db) => known.get(db) !== false));
            for (const db of DBS) known.set(db, withDdocs.includes(db) && known.get(db) !== false);
            continue;
          }
          if (event.type === "db-created") {
            sim.send({ type: "db-created", db: event.db });
            if (!known.has(event.db)) known.set(event.db, false);
          } else if (event.type === "db-deleted") {
            sim.send({ type: "db-deleted", db: event.db });
            known.delete(event.db);
          } else {
            sim.send({ type: "design-doc-updated", db: event.db, ddoc: "_design/x" });
            known.set(event.db, true);
          }
          sim.runToQuiescence();
        }
      }),
    );
  });
});
