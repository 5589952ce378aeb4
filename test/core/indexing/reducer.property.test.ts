/**
 * The indexing core under random workloads in a model world (world.ts):
 * random configurations, writes, design doc changes (autoupdate switches,
 * languages, garbage), db deletions, queries, operator nudges, answers that
 * come back late and out of order, ticks early or late, failing backends
 * and failing inspections.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultIndexingConfig, refusalOf, shouldStartJob, type IndexingConfig, type IndexingState } from "../../../src/core/indexing/index.js";
import { priorityClassOf } from "../../../src/core/indexing/priority.js";
import { World } from "./world.js";

const DBS = ["a", "b", "c", "d"];
const LANGUAGES: ReadonlySet<string> = new Set(defaultIndexingConfig.allowedLanguages);

const ddocBody = (variant: number, autoupdate: number, language: number, search: boolean): Record<string, unknown> => ({
  views: { v: { map: `function (doc) { emit(doc._id, ${variant}); }` } },
  ...(search ? { indexes: { s: { index: `function (doc) { index("v", ${variant}); }` } } } : {}),
  ...([{}, { autoupdate: false }, { autoupdate: { views: false } }, { autoupdate: { indexes: false } }][autoupdate] ?? {}),
  ...([{}, { language: "javascript" }, { language: "erlang" }, { language: 42 }][language] ?? {}),
});

type Op =
  | { kind: "write"; db: number; count: number }
  | { kind: "ddoc"; db: number; ddoc: number; variant: number; autoupdate: number; language: number; search: boolean }
  | { kind: "drop-ddoc"; db: number; ddoc: number }
  | { kind: "delete-db"; db: number }
  | { kind: "create-db"; db: number }
  | { kind: "query"; db: number; ddoc: number }
  | { kind: "prioritize"; db: number }
  | { kind: "enqueue"; db: number }
  | { kind: "wait"; ms: number };

const db = fc.integer({ min: 0, max: DBS.length - 1 });
const op = (allowed: readonly Op["kind"][]): fc.Arbitrary<Op> =>
  fc.oneof(
    ...(
      [
        fc.record({ kind: fc.constant("write" as const), db, count: fc.integer({ min: 1, max: 40 }) }),
        fc.record({
          kind: fc.constant("ddoc" as const),
          db,
          ddoc: fc.integer({ min: 0, max: 2 }),
          variant: fc.integer({ min: 0, max: 2 }),
          autoupdate: fc.integer({ min: 0, max: 3 }),
          language: fc.integer({ min: 0, max: 3 }),
          search: fc.boolean(),
        }),
        fc.record({ kind: fc.constant("drop-ddoc" as const), db, ddoc: fc.integer({ min: 0, max: 2 }) }),
        fc.record({ kind: fc.constant("delete-db" as const), db }),
        fc.record({ kind: fc.constant("create-db" as const), db }),
        fc.record({ kind: fc.constant("query" as const), db, ddoc: fc.integer({ min: 0, max: 2 }) }),
        fc.record({ kind: fc.constant("prioritize" as const), db }),
        fc.record({ kind: fc.constant("enqueue" as const), db }),
        fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 3000 }) }),
      ] as fc.Arbitrary<Op>[]
    ).filter((arb, i) => allowed.includes((["write", "ddoc", "drop-ddoc", "delete-db", "create-db", "query", "prioritize", "enqueue", "wait"] as const)[i]!)),
  );

const ALL: readonly Op["kind"][] = ["write", "ddoc", "drop-ddoc", "delete-db", "create-db", "query", "prioritize", "enqueue", "wait"];

const configArb = (overrides: Partial<IndexingConfig> = {}, minBatch = 1): fc.Arbitrary<IndexingConfig> =>
  fc
    .record({
      batchChannels: fc.integer({ min: 0, max: 3 }),
      incrementalChannels: fc.integer({ min: 0, max: 3 }),
      maxIncrementalUpdates: fc.integer({ min: 1, max: 60 }),
      batchSize: fc.integer({ min: 1, max: 3 }),
      kenDelayMs: fc.integer({ min: 0, max: 2000 }),
      delayMs: fc.integer({ min: 0, max: 1000 }),
      resolutionMs: fc.integer({ min: 1, max: 400 }),
      pruneIntervalMs: fc.integer({ min: 1001, max: 5000 }),
      retryInitialMs: fc.integer({ min: 10, max: 300 }),
      retryMaxAttempts: fc.integer({ min: 0, max: 3 }),
      maxInspections: fc.integer({ min: 1, max: 3 }),
      ignoredDbs: fc.subarray(DBS, { maxLength: 1 }),
    })
    .map((c) => ({
      ...defaultIndexingConfig,
      ...c,
      // At least one batch channel: only those take a backlog of max_incremental_updates or more
      // (ken's rule: with none, such an index is never built in the background; safety is tested with none too).
      batchChannels: Math.max(minBatch, c.batchChannels),
      retryMaxMs: 2000,
      ...overrides,
    }));

const setUp = (world: World): void => {
  for (const name of DBS) {
    world.createDb(name);
    world.putDdoc(name, "_design/d0", ddocBody(0, 0, 0, false));
  }
};

const apply = (world: World, o: Op): void => {
  const name = DBS["db" in o ? o.db : 0] ?? "a";
  switch (o.kind) {
    case "write":
      return world.write(name, o.count);
    case "ddoc":
      return world.putDdoc(name, `_design/d${o.ddoc}`, ddocBody(o.variant, o.autoupdate, o.language, o.search));
    case "drop-ddoc":
      return world.putDdoc(name, `_design/d${o.ddoc}`, undefined);
    case "delete-db":
      return world.deleteDb(name);
    case "create-db":
      return world.createDb(name);
    case "query":
      return world.dispatch({ type: "index-queried", db: name, ddoc: `_design/d${o.ddoc}` });
    case "prioritize":
      return world.dispatch({ type: "prioritize", db: name });
    case "enqueue":
      return world.dispatch({ type: "enqueue", db: name });
    case "wait":
      return world.advanceTo(world.nowMs + o.ms);
  }
};

/** Every index the rules say to keep up to date is fresh in the world. */
const staleIndexes = (world: World, config: IndexingConfig, types: ReadonlySet<string> = new Set(["views", "search"])): string[] => {
  const stale: string[] = [];
  for (const [name, stored] of world.dbs) {
    if (config.ignoredDbs.includes(name)) continue;
    for (const index of world.indexesOf(name)) {
      if (!types.has(index.spec.type)) continue;
      const wanted = index.spec.ddocs.some((id) => refusalOf({ id, body: stored.ddocs.get(id) }, index.spec.field, LANGUAGES) === undefined);
      if (wanted && !index.fresh) stale.push(`${name} ${index.spec.name} (${index.spec.type})`);
    }
  }
  return stale;
};

const busyWorld = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  maxLatencyMs: fc.constantFrom(0, 5, 200),
  tickJitterMs: fc.constantFrom(0, 30),
  msPerUpdate: fc.constantFrom(0, 2, 20),
});

describe("indexing core: safety", () => {
  it("never more builds than batch_channels + incremental_channels, never two of one index at once", () => {
    fc.assert(
      fc.property(configArb({}, 0), busyWorld, fc.array(op(ALL), { maxLength: 80 }), fc.boolean(), (config, w, ops, failing) => {
        const world = new World({ config, ...w, failingTypes: failing ? new Set(["search"]) : new Set(), inspectFailureRate: failing ? 0.2 : 0 });
        setUp(world);
        for (const o of ops) apply(world, o);
        world.settle(120_000);
        expect(world.violations).toEqual([]);
      }),
    );
  });

  it("an ignored db, an autoupdate: false index or a language not allowed is never built", () => {
    fc.assert(
      fc.property(configArb(), busyWorld, fc.array(op(ALL), { maxLength: 80 }), (config, w, ops) => {
        const world = new World({ config, ...w });
        const wrong: string[] = [];
        const check = (): void => {
          for (const build of world.started.splice(0)) {
            if (config.ignoredDbs.includes(build.db)) wrong.push(`ignored ${build.db}`);
            // What the core knew of the db's design docs when it decided.
            const known = build.knownDesignDocs;
            const wants = build.spec.ddocs.some((id) => refusalOf(known.find((d) => d.id === id), build.spec.field, LANGUAGES) === undefined);
            if (!wants) wrong.push(`${build.db} ${build.spec.name} (${build.spec.type}) not wanted`);
          }
        };
        setUp(world);
        check();
        for (const o of ops) {
          apply(world, o);
          check();
        }
        for (let i = 0; i < 200 && !world.idle(); i++) {
          world.advanceTo(world.nowMs + 500);
          check();
        }
        expect(wrong).toEqual([]);
      }),
    );
  });
});

describe("indexing core: liveness", () => {
  it("every index of a db that stops changing is eventually up to date (late answers, odd ticks, failing inspections)", () => {
    fc.assert(
      fc.property(configArb(), busyWorld, fc.array(op(ALL), { maxLength: 80 }), fc.constantFrom(0, 0.3), (config, w, ops, inspectFailureRate) => {
        const world = new World({ config, ...w, inspectFailureRate });
        setUp(world);
        for (const o of ops) apply(world, o);
        world.settle(600_000);
        expect(staleIndexes(world, config)).toEqual([]);
        expect(world.violations).toEqual([]);
      }),
    );
  });

  it("a backend that always fails does not stop the others", () => {
    fc.assert(
      fc.property(configArb(), busyWorld, fc.array(op(ALL), { maxLength: 60 }), (config, w, ops) => {
        const world = new World({ config, ...w, failingTypes: new Set(["search"]) });
        setUp(world);
        world.putDdoc("b", "_design/s", ddocBody(1, 0, 0, true));
        for (const o of ops) apply(world, o);
        world.settle(600_000);
        expect(staleIndexes(world, config, new Set(["views"]))).toEqual([]);
      }),
    );
  });
});

describe("indexing core: timing and order", () => {
  it("pending updates are processed no earlier than index_updater_delay_msec after the first one", () => {
    fc.assert(
      fc.property(configArb({ ignoredDbs: [] }), busyWorld, fc.array(op(["write", "wait"]), { maxLength: 80 }), (config, w, ops) => {
        const world = new World({ config, ...w });
        setUp(world);
        world.settle(600_000);
        const firstWriteAtMs = new Map<string, number>();
        const early: string[] = [];
        let seen = world.effects.length;
        const check = (): void => {
          for (const { atMs, effect } of world.effects.slice(seen)) {
            if (effect.type !== "inspect-db") continue;
            const first = firstWriteAtMs.get(effect.db);
            if (first !== undefined && atMs - first < config.delayMs) early.push(`${effect.db} at ${atMs}, first write at ${first}`);
            firstWriteAtMs.delete(effect.db);
          }
          seen = world.effects.length;
        };
        for (const o of ops) {
          if (o.kind === "write") {
            const name = DBS[o.db]!;
            if (!firstWriteAtMs.has(name)) firstWriteAtMs.set(name, world.nowMs);
          }
          apply(world, o);
          check();
        }
        world.settle(600_000);
        check();
        expect(early).toEqual([]);
      }),
    );
  });

  it("a queried index is overtaken only by an unqueried one that has waited query_boost_msec longer", () => {
    const config = configArb({ incrementalChannels: 0, ignoredDbs: [] }).map((c) => ({ ...c, batchChannels: Math.max(1, c.batchChannels), queryBoostMs: 3000 }));
    fc.assert(
      fc.property(config, busyWorld, fc.array(op(["write", "ddoc", "query", "wait"]), { maxLength: 80 }), (c, w, ops) => {
        const world = new World({ config: c, ...w });
        const overtaken: string[] = [];
        const original = world.dispatch.bind(world);
        world.dispatch = (event) => {
          const before: IndexingState = world.state;
          const startedBefore = world.started.length;
          original(event);
          for (const build of world.started.slice(startedBefore)) checkOvertaking(before, world, build.key, overtaken);
        };
        setUp(world);
        for (const o of ops) apply(world, o);
        world.settle(600_000);
        expect(overtaken).toEqual([]);
      }),
    );
  });
});

/** `started` began in this step: no queried, startable candidate may have waited less than the boost longer than it. */
function checkOvertaking(before: IndexingState, world: World, started: string, overtaken: string[]): void {
  const nowMs = world.nowMs;
  const after = world.state;
  const u = before.waiting.get(started);
  const uSince = u?.sinceMs ?? nowMs;
  const uClass = priorityClassOf(after, u?.db ?? "", u?.spec.ddocs ?? [], nowMs);
  if (uClass !== "normal") return;
  for (const [key, q] of before.waiting.entries()) {
    if (key === started || q.notBeforeMs > nowMs || !after.waiting.has(key)) continue;
    if (priorityClassOf(after, q.db, q.spec.ddocs, nowMs) !== "queried") continue;
    const row = before.jobs.get(key);
    const entry = row === undefined ? undefined : { seq: row.seq, lastRunMs: row.lastRunMs, running: row.runningJobId !== undefined };
    // Only a candidate ken's rule would have started (with a channel free) counts as overtaken.
    if (!shouldStartJob({ entry, dbSeq: q.dbSeq, indexSeq: q.indexSeq, active: 0, nowMs }, after.config).start) continue;
    if (uSince > q.sinceMs - after.config.queryBoostMs) overtaken.push(`${started} (since ${uSince}) before queried ${key} (since ${q.sinceMs}) at ${nowMs}`);
  }
}
