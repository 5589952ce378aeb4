/**
 * Geo index files as compaction objects: they obey the view rules, in the
 * view channels. The strongest form is a twin run: the same events for geo
 * files and for view groups with the same sizes give the same effects, once
 * each geo file is renamed to its view twin.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isRight } from "fp-ts/lib/Either.js";
import { channelPriority } from "../../../src/core/compaction/priority.js";
import {
  describeObject,
  objectKey,
  SmooshSnapshotC,
  type ChannelConfig,
  type CompactionObject,
  type GeoSizeInfo,
  type ObjectInfo,
  type SmooshEffect,
} from "../../../src/core/compaction/index.js";
import { configFrom, Sim } from "./harness.js";

const DBS = ["a", "b", "c"];
const SIGNATURES = ["0f3a9d", "9c1e77"];
const GEO: CompactionObject[] = DBS.flatMap((db) => SIGNATURES.map((signature) => ({ kind: "geo" as const, db, signature })));
const DB_OBJECTS: CompactionObject[] = DBS.map((db) => ({ kind: "db" as const, db }));

const DESIGN = "_design/";
/** A geo file's view twin: same db, a design doc named after the signature. */
const twinOf = (object: CompactionObject): CompactionObject =>
  object.kind === "geo" ? { kind: "view", db: object.db, ddoc: `${DESIGN}${object.signature}` } : object;
const geoOf = (object: CompactionObject): CompactionObject =>
  object.kind === "view" ? { kind: "geo", db: object.db, signature: object.ddoc.slice(DESIGN.length) } : object;
const twinInfo = (info: ObjectInfo | "missing"): ObjectInfo | "missing" =>
  info !== "missing" && info.kind === "geo"
    ? { kind: "view", fileBytes: info.fileBytes, activeBytes: info.activeBytes, needsUpgrade: false, compactionRunning: info.compactionRunning }
    : info;

/** Effects with every geo file renamed to its twin (objects, and names in log text). */
const renamed = (x: unknown): unknown => {
  if (typeof x === "string") return x.replace(/ _geo\//g, ` ${DESIGN}`);
  if (Array.isArray(x)) return x.map(renamed);
  if (typeof x !== "object" || x === null) return x;
  const o = x as Record<string, unknown>;
  if (o["kind"] === "geo" && typeof o["signature"] === "string") return twinOf(o as CompactionObject);
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, renamed(v)]));
};

const sizesArb = fc.record({
  fileBytes: fc.oneof(fc.integer({ min: 0, max: 4 * 1024 ** 3 }), fc.integer({ min: 0, max: 4 * 1024 ** 2 })),
  activeBytes: fc.oneof(fc.integer({ min: 0, max: 1024 ** 3 }), fc.integer({ min: 0, max: 1024 ** 2 }), fc.constant(0)),
});
const geoInfoArb = (running: fc.Arbitrary<boolean>): fc.Arbitrary<GeoSizeInfo | "missing"> =>
  fc.oneof(
    { weight: 9, arbitrary: fc.record({ sizes: sizesArb, updateSeq: fc.nat(), compactionRunning: running }).map(({ sizes, ...rest }) => ({ kind: "geo" as const, ...sizes, ...rest })) },
    { weight: 1, arbitrary: fc.constant("missing" as const) },
  );
const dbInfoArb: fc.Arbitrary<ObjectInfo> = sizesArb.map((s) => ({ kind: "db", ...s, updateSeq: 10, compactedSeq: undefined, needsUpgrade: false, compactionRunning: false }));

/** One info per object for a whole run (geo files may be running when `running` says so). */
const infosArb = (running: fc.Arbitrary<boolean>) =>
  fc.tuple(fc.tuple(...GEO.map(() => geoInfoArb(running))), fc.tuple(...DB_OBJECTS.map(() => dbInfoArb))).map(([geo, dbs]) => {
    const table = new Map<string, ObjectInfo | "missing">();
    GEO.forEach((o, i) => table.set(objectKey(o), geo[i] ?? "missing"));
    DB_OBJECTS.forEach((o, i) => table.set(objectKey(o), dbs[i] ?? "missing"));
    return (o: CompactionObject): ObjectInfo | "missing" => table.get(objectKey(o)) ?? "missing";
  });

const channelIni = fc
  .record({ concurrency: fc.integer({ min: 0, max: 2 }), capacity: fc.integer({ min: 1, max: 4 }), min_size: fc.constantFrom("0", "1048576") })
  .map((c) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, String(v)])));
const iniArb = fc
  .record({ ratio_views: channelIni, slack_views: channelIni, upgrade_views: channelIni, ratio_dbs: channelIni, waitSecs: fc.integer({ min: 0, max: 30 }), maxInfo: fc.integer({ min: 1, max: 3 }) })
  .map(({ waitSecs, maxInfo, ...channels }) => ({
    smoosh: {
      db_channels: "ratio_dbs",
      view_channels: "upgrade_views,ratio_views,slack_views",
      wait_secs: String(waitSecs),
      max_info_requests: String(maxInfo),
      retry_initial_secs: "1",
      retry_max_attempts: "3",
      // Views alone are followed by an index cleanup (cleanup_index_files); geo files have none.
      cleanup_index_files: "false",
      rescan_interval: "3600",
      persist: "true",
      checkpoint_secs: "600",
    },
    ...Object.fromEntries(Object.entries(channels).map(([name, settings]) => [`smoosh.${name}`, settings])),
  }));

type Action =
  | { t: "update"; object: number; force: boolean }
  | { t: "answer"; index: number; ok: boolean }
  | { t: "advance"; ms: number }
  | { t: "suspend" }
  | { t: "resume" }
  | { t: "flush" }
  | { t: "deleted"; db: number }
  | { t: "enqueue-all" };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant("update" as const), object: fc.nat(), force: fc.boolean() }) },
  { weight: 12, arbitrary: fc.record({ t: fc.constant("answer" as const), index: fc.nat(), ok: fc.oneof(fc.constant(true), fc.boolean()) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("advance" as const), ms: fc.oneof(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 2 * 3600_000 })) }) },
  { weight: 1, arbitrary: fc.constant({ t: "suspend" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "resume" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "flush" as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("deleted" as const), db: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ t: "enqueue-all" as const }) },
);

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length] as T;

/** Play `actions` on `sim`; `as` names the objects of this run (geo files, or their twins). */
const play = (sim: Sim, actions: readonly Action[], as: (o: CompactionObject) => CompactionObject): void => {
  const objects = [...GEO, ...DB_OBJECTS];
  for (const a of actions) {
    if (a.t === "update") sim.send({ type: "object-updated", object: as(pick(objects, a.object)), force: a.force });
    else if (a.t === "answer") sim.answer(a.index, a.ok);
    else if (a.t === "advance") sim.advance(a.ms);
    else if (a.t === "deleted") sim.send({ type: "db-deleted", db: pick(DBS, a.db) });
    else if (a.t === "enqueue-all") sim.send({ type: "enqueue-all", scope: "views" });
    else sim.send({ type: a.t });
  }
};

const geoSim = (ini: Parameters<typeof configFrom>[0], infoOf: (o: CompactionObject) => ObjectInfo | "missing"): Sim => {
  const sim = new Sim(configFrom(ini), infoOf, DBS, () => []);
  sim.geoSignaturesOf = () => SIGNATURES;
  return sim;
};

const viewChannelNames = ["upgrade_views", "ratio_views", "slack_views"];

describe("geo index files follow the view rules", () => {
  it("priority: a geo file's is its view twin's in every channel, and 0 outside view channels", () => {
    const ruleArb = fc.record({
      name: fc.constant("c"),
      kind: fc.constantFrom("view" as const, "view" as const, "db" as const, "cleanup" as const),
      priority: fc.constantFrom("ratio" as const, "slack" as const, "upgrade" as const),
      minPriority: fc.oneof(fc.double({ min: 0, max: 5, noNaN: true }), fc.integer({ min: 0, max: 2 ** 20 })),
      maxPriority: fc.oneof({ weight: 3, arbitrary: fc.constant(Infinity) }, fc.double({ min: 0, max: 100, noNaN: true }), fc.integer({ min: 0, max: 2 ** 32 })),
      minSizeBytes: fc.integer({ min: 0, max: 2 ** 20 }),
      maxSizeBytes: fc.oneof({ weight: 3, arbitrary: fc.constant(Infinity) }, fc.integer({ min: 0, max: 2 ** 32 })),
      minChanges: fc.nat(),
    });
    let taken = 0;
    fc.assert(
      fc.property(ruleArb, geoInfoArb(fc.boolean()), (rule, info) => {
        if (info === "missing") return;
        const channel = rule as Pick<ChannelConfig, keyof typeof rule>;
        const priority = channelPriority(channel, info);
        expect(priority).toBe(channelPriority(channel, twinInfo(info) as ObjectInfo));
        if (rule.kind !== "view") expect(priority).toBe(0);
        expect(priority).toBeGreaterThanOrEqual(0);
        if (priority > 0) taken += 1;
      }),
    );
    // Not only zeros: many generated files are taken.
    expect(taken).toBeGreaterThan(20);
  });

  it("twin runs: the same events give the same checks, queue placements, starts and status as view groups of the same sizes", () => {
    let geoStarts = 0;
    fc.assert(
      fc.property(iniArb, infosArb(fc.constant(false)), fc.array(actionArb, { minLength: 40, maxLength: 160 }), (ini, infoOf, actions) => {
        const geo = geoSim(ini, infoOf);
        const views = new Sim(configFrom(ini), (o) => twinInfo(infoOf(geoOf(o))), DBS, () => SIGNATURES.map((s) => `${DESIGN}${s}`));
        play(geo, actions, (o) => o);
        play(views, actions, twinOf);
        expect(renamed(geo.effects)).toEqual(views.effects as unknown);
        expect(geo.state.metrics).toEqual(views.state.metrics);
        for (const name of viewChannelNames) expect(geo.state.channels.get(name)?.queue.size).toBe(views.state.channels.get(name)?.queue.size);
        geoStarts += geo.starts.filter((s) => s.object.kind === "geo").length;
      }),
    );
    // The property must really start geo files, not only agree on doing nothing.
    expect(geoStarts).toBeGreaterThan(100);
  });

  it("among dbs: a geo file is never run twice, never adopted, only in view channels; a running one is left alone", () => {
    const startEffects = (effects: readonly SmooshEffect[]) => effects.filter((e): e is Extract<SmooshEffect, { type: "start-job" }> => e.type === "start-job");
    let leftAlone = 0;
    fc.assert(
      fc.property(iniArb, infosArb(fc.boolean()), fc.array(actionArb, { minLength: 40, maxLength: 160 }), (ini, infoOf, actions) => {
        const sim = geoSim(ini, infoOf);
        // The harness checks every start: no object twice, concurrency, window, channel kind.
        play(sim, actions, (o) => o);
        for (const start of startEffects(sim.effects).filter((e) => e.object.kind === "geo")) {
          expect(start.adopt).toBe(false);
          expect(viewChannelNames).toContain(start.channel);
        }
        leftAlone += sim.effectsOf("log").filter((l) => l.msg === "smoosh: skipped at start, already being compacted").length;
      }),
    );
    expect(leftAlone).toBeGreaterThan(10);
  });

  it("every geo file some view channel takes is eventually compacted, unless a compaction of it already runs", () => {
    fc.assert(
      fc.property(infosArb(fc.boolean()), fc.integer({ min: 1, max: 3 }), fc.subarray(GEO), (infoOf, concurrency, updated) => {
        const channel = { concurrency: String(concurrency), capacity: "100" };
        const config = configFrom({
          smoosh: { rescan_interval: "0", wait_secs: "30" },
          "smoosh.ratio_views": channel,
          "smoosh.slack_views": channel,
          "smoosh.upgrade_views": channel,
        });
        const sim = new Sim(config, infoOf);
        for (const object of updated) sim.send({ type: "object-updated", object });
        sim.runToQuiescence();
        const viewChannels = Object.values(config.channels).filter((c) => c.kind === "view");
        for (const object of updated) {
          const info = infoOf(object);
          const eligible = info !== "missing" && info.kind === "geo" && !info.compactionRunning && viewChannels.some((c) => channelPriority(c, info) > 0);
          const starts = sim.starts.filter((s) => objectKey(s.object) === objectKey(object));
          expect(starts.length, `${describeObject(object)} ${JSON.stringify(info)}`).toBe(eligible ? 1 : 0);
        }
        expect(sim.state.metrics.finished).toBe(sim.starts.length);
      }),
    );
  });
});

describe("geo index files, examples", () => {
  it("are named `db _geo/<signature>` in logs and keyed apart from view groups", () => {
    const geo: CompactionObject = { kind: "geo", db: "places", signature: "5e1f" };
    expect(describeObject(geo)).toBe("places _geo/5e1f");
    expect(objectKey(geo)).not.toBe(objectKey({ kind: "view", db: "places", ddoc: "_design/5e1f" }));
    expect(objectKey(geo)).not.toBe(objectKey({ kind: "view", db: "places", ddoc: "_geo/5e1f" }));
  });

  it("survive a persisted snapshot and are restored to their view channel", () => {
    const config = configFrom({ smoosh: { persist: "true", wait_secs: "60", rescan_interval: "0" } });
    const geo: CompactionObject = { kind: "geo", db: "places", signature: "5e1f" };
    const decoded = SmooshSnapshotC.decode(
      JSON.parse(JSON.stringify(SmooshSnapshotC.encode({ version: 1, savedAtMs: 0, channels: { ratio_views: [{ object: geo, priority: 3 }] } }))),
    );
    expect(isRight(decoded)).toBe(true);
    if (!isRight(decoded)) return;
    const sim = new Sim(config, () => "missing");
    sim.send({ type: "state-restored", snapshot: decoded.right });
    expect(sim.state.channels.get("ratio_views")?.queue.size).toBe(1);
  });

  it("are listed with the design docs: enqueue_all views checks them", () => {
    const config = configFrom({ smoosh: { wait_secs: "0", rescan_interval: "0" } });
    const info: ObjectInfo = { kind: "geo", fileBytes: 8 * 1024 ** 2, activeBytes: 1024 ** 2, updateSeq: 40, compactionRunning: false };
    const sim = new Sim(config, () => info, ["places"], () => []);
    sim.geoSignaturesOf = () => ["5e1f"];
    sim.send({ type: "enqueue-all", scope: "views" });
    sim.runToQuiescence();
    expect(sim.starts.map((s) => [s.channel, describeObject(s.object)])).toEqual([["ratio_views", "places _geo/5e1f"]]);
  });
});
