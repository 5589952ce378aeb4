/**
 * A model world for the pure indexing core: dbs with seqs and design docs,
 * index backends (views, search) that take time to build and may fail, a
 * shell that answers every effect after a latency and fires ticks early or
 * late. Everything is deterministic given the seed. Builds in flight are
 * tracked here, outside the core, so invariants are checked against what
 * the world really runs, not against the core's own bookkeeping.
 */
import {
  initIndexing,
  namedIndexesOf,
  step,
  totalChannels,
  viewIndexesOf,
  type IndexingConfig,
  type IndexingEffect,
  type IndexingEvent,
  type IndexingState,
  type IndexSpec,
  type InspectedIndex,
  type ListedDesignDoc,
} from "../../../src/core/indexing/index.js";
import { nextFloat, seedPrng, type PrngState } from "../../../src/core/shared/prng.js";

export interface WorldDb {
  seq: number;
  ddocs: Map<string, Record<string, unknown>>;
}

export interface RunningBuild {
  readonly jobId: number;
  readonly key: string;
  readonly db: string;
  readonly spec: IndexSpec;
  readonly startedAtMs: number;
  /** The db's seq when it started: what it reaches (writes during it are for the next build). */
  readonly startSeq: number;
  /** The design docs the core knew of the db when it decided to build. */
  readonly knownDesignDocs: readonly ListedDesignDoc[];
}

export interface WorldOptions {
  readonly config: IndexingConfig;
  readonly seed: number;
  /** Answers come back after up to this (random). */
  readonly maxLatencyMs?: number;
  /** Ticks fire up to this early or late. */
  readonly tickJitterMs?: number;
  /** Build time per update behind. */
  readonly msPerUpdate?: number;
  /** Index types whose builds always fail. */
  readonly failingTypes?: ReadonlySet<string>;
  /** Inspections that fail (transiently) with this probability. */
  readonly inspectFailureRate?: number;
}

interface Scheduled {
  readonly atMs: number;
  readonly order: number;
  readonly event: IndexingEvent;
  readonly jobId?: number;
}

export const worldKey = (db: string, spec: Pick<IndexSpec, "type" | "key">): string => `${db}\u0000${spec.type}\u0000${spec.key}`;

export class World {
  nowMs = 0;
  state: IndexingState;
  readonly dbs = new Map<string, WorldDb>();
  /** Index key -> seq reached. */
  readonly indexSeqs = new Map<string, number>();
  readonly running = new Map<number, RunningBuild>();
  readonly effects: { readonly atMs: number; readonly effect: IndexingEffect }[] = [];
  readonly violations: string[] = [];
  /** Every build started, in order. */
  readonly started: RunningBuild[] = [];
  private queue: Scheduled[] = [];
  private order = 0;
  private tickAtMs: number | undefined;
  private prng: PrngState;

  constructor(readonly options: WorldOptions) {
    this.prng = seedPrng(options.seed);
    const first = initIndexing(options.config, 0, options.seed);
    this.state = first.state;
    this.perform(first.effects);
  }

  private random(): number {
    const [value, next] = nextFloat(this.prng);
    this.prng = next;
    return value;
  }

  private later(event: IndexingEvent, delayMs: number, jobId?: number): void {
    this.queue.push({ atMs: this.nowMs + delayMs, order: this.order++, event, ...(jobId !== undefined ? { jobId } : {}) });
    this.queue.sort((a, b) => a.atMs - b.atMs || a.order - b.order);
  }

  private latency(): number {
    return Math.floor(this.random() * ((this.options.maxLatencyMs ?? 0) + 1));
  }

  dispatch(event: IndexingEvent): void {
    const result = step(this.state, event, this.nowMs);
    this.state = result.state;
    this.perform(result.effects);
  }

  private perform(effects: readonly IndexingEffect[]): void {
    for (const effect of effects) {
      this.effects.push({ atMs: this.nowMs, effect });
      this.performOne(effect);
    }
  }

  private performOne(effect: IndexingEffect): void {
    switch (effect.type) {
      case "inspect-db":
        return this.later(this.inspect(effect.requestId, effect.db), this.latency());
      case "build-index":
        return this.startBuild(effect);
      case "cancel-build": {
        // As the runtime does: the build lets go, and says so.
        if (!this.running.has(effect.jobId)) return;
        this.queue = this.queue.filter((s) => s.jobId !== effect.jobId);
        return this.later({ type: "build-failed", jobId: effect.jobId, error: "aborted", transient: true }, this.latency(), effect.jobId);
      }
      case "cleanup-indexes":
        return this.later({ type: "cleanup-done", requestId: effect.requestId, db: effect.db }, this.latency());
      case "schedule-tick": {
        const jitter = this.options.tickJitterMs ?? 0;
        const offset = Math.floor((this.random() * 2 - 1) * jitter);
        this.tickAtMs = Math.max(this.nowMs, effect.atMs + offset);
        return;
      }
      default:
        return;
    }
  }

  private inspect(requestId: number, db: string): IndexingEvent {
    const stored = this.dbs.get(db);
    if (stored === undefined) return { type: "db-missing", requestId, db };
    if (this.random() < (this.options.inspectFailureRate ?? 0)) return { type: "inspect-failed", requestId, db, error: "timeout", transient: true };
    const designDocs: ListedDesignDoc[] = [...stored.ddocs].map(([id, body]) => ({ id, body }));
    const found = [viewIndexesOf(designDocs), namedIndexesOf("search", "indexes", designDocs)];
    const indexes: InspectedIndex[] = found.flatMap((f) => f.indexes).map((spec) => ({ spec, progress: { indexSeq: this.indexSeqs.get(worldKey(db, spec)) ?? 0, updating: false } }));
    return { type: "db-inspected", requestId, db, dbSeq: stored.seq, designDocs, indexes, problems: found.flatMap((f) => f.problems) };
  }

  private startBuild(effect: Extract<IndexingEffect, { type: "build-index" }>): void {
    const key = worldKey(effect.db, effect.index);
    const build: RunningBuild = { jobId: effect.jobId, key, db: effect.db, spec: effect.index, startedAtMs: this.nowMs, startSeq: this.dbs.get(effect.db)?.seq ?? 0, knownDesignDocs: this.state.designDocs.get(effect.db) ?? [] };
    const total = totalChannels(this.state.config);
    if (this.running.size + 1 > total) this.violations.push(`${this.nowMs}: ${this.running.size + 1} builds running, channels ${total}`);
    if ([...this.running.values()].some((r) => r.key === key)) this.violations.push(`${this.nowMs}: two builds of ${key}`);
    this.running.set(effect.jobId, build);
    this.started.push(build);
    const backlog = Math.max(0, (this.dbs.get(effect.db)?.seq ?? 0) - (this.indexSeqs.get(key) ?? 0));
    const durationMs = 1 + this.latency() + backlog * (this.options.msPerUpdate ?? 0);
    if (this.options.failingTypes?.has(effect.index.type) === true) {
      this.later({ type: "build-failed", jobId: effect.jobId, error: "the backend broke", transient: this.random() < 0.5 }, durationMs, effect.jobId);
    } else {
      // The seqs are filled in at delivery: the index reaches the db's seq at the build's start.
      this.later({ type: "build-finished", jobId: effect.jobId, indexSeq: -1 }, durationMs, effect.jobId);
    }
  }

  /** Deliver everything due by `targetMs` (answers and the tick), in time order. */
  advanceTo(targetMs: number): void {
    for (;;) {
      const next = this.queue[0];
      const tick = this.tickAtMs;
      const answerAt = next?.atMs ?? Infinity;
      const tickAt = tick ?? Infinity;
      if (Math.min(answerAt, tickAt) > targetMs) break;
      if (tickAt < answerAt) {
        this.nowMs = Math.max(this.nowMs, tickAt);
        this.tickAtMs = undefined;
        this.dispatch({ type: "tick" });
        continue;
      }
      this.queue.shift();
      this.nowMs = Math.max(this.nowMs, answerAt);
      this.deliver(next!);
    }
    this.nowMs = Math.max(this.nowMs, targetMs);
  }

  private deliver(scheduled: Scheduled): void {
    const event = scheduled.event;
    if (event.type === "build-finished" || event.type === "build-failed") {
      const build = this.running.get(event.jobId);
      this.running.delete(event.jobId);
      if (event.type === "build-finished" && build !== undefined) {
        const dbSeq = this.dbs.get(build.db)?.seq ?? 0;
        this.indexSeqs.set(build.key, Math.max(this.indexSeqs.get(build.key) ?? 0, build.startSeq));
        this.dispatch({ type: "build-finished", jobId: event.jobId, indexSeq: this.indexSeqs.get(build.key)!, dbSeq });
        return;
      }
    }
    this.dispatch(event);
  }

  /** Nothing left to happen: no answer, no tick. */
  idle(): boolean {
    return this.queue.length === 0 && this.tickAtMs === undefined;
  }

  /** Run until idle (or `maxMs` of model time). */
  settle(maxMs: number): void {
    const deadline = this.nowMs + maxMs;
    while (!this.idle() && this.nowMs < deadline) {
      const next = Math.min(this.queue[0]?.atMs ?? Infinity, this.tickAtMs ?? Infinity);
      this.advanceTo(Math.min(deadline, next));
    }
  }

  // --- the workload ---------------------------------------------------------

  createDb(db: string): void {
    if (!this.dbs.has(db)) this.dbs.set(db, { seq: 0, ddocs: new Map() });
  }

  write(db: string, count = 1): void {
    const stored = this.dbs.get(db);
    if (stored === undefined) return;
    stored.seq += count;
    this.dispatch({ type: "db-updated", db });
  }

  putDdoc(db: string, id: string, body: Record<string, unknown> | undefined): void {
    const stored = this.dbs.get(db);
    if (stored === undefined) return;
    if (body === undefined) stored.ddocs.delete(id);
    else stored.ddocs.set(id, body);
    stored.seq += 1;
    this.dispatch({ type: "db-updated", db });
    this.dispatch({ type: "ddoc-updated", db, ddoc: id });
  }

  deleteDb(db: string): void {
    if (!this.dbs.delete(db)) return;
    for (const key of [...this.indexSeqs.keys()]) if (key.startsWith(`${db}\u0000`)) this.indexSeqs.delete(key);
    this.dispatch({ type: "db-deleted", db });
  }

  /** Every index the db's design docs define (whatever autoupdate says), with the world's view of it. */
  indexesOf(db: string): { key: string; spec: IndexSpec; fresh: boolean }[] {
    const stored = this.dbs.get(db);
    if (stored === undefined) return [];
    const designDocs = [...stored.ddocs].map(([id, body]) => ({ id, body }));
    return [viewIndexesOf(designDocs), namedIndexesOf("search", "indexes", designDocs)]
      .flatMap((f) => f.indexes)
      .map((spec) => ({ key: worldKey(db, spec), spec, fresh: (this.indexSeqs.get(worldKey(db, spec)) ?? 0) >= stored.seq }));
  }
}
