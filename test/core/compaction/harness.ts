/**
 * A model shell for the reducer: it answers the core's effects the way the
 * runtime would (infos from a table, jobs that start and end when told),
 * follows `schedule-tick` on a virtual clock, and checks the invariants every
 * start must respect at the moment the core emits it.
 */
import { expect } from "vitest";
import { isRight } from "fp-ts/lib/Either.js";
import type { IniSections } from "../../../src/core/shared/ini.js";
import {
  channelKindOf,
  decodeSmooshConfig,
  initSmoosh,
  objectKey,
  step,
  type CompactionObject,
  type ObjectInfo,
  type SmooshConfig,
  type SmooshEffect,
  type SmooshEvent,
  type SmooshState,
} from "../../../src/core/compaction/index.js";
import { channelJobCount } from "../../../src/core/compaction/channel.js";
import { misplacedDueChecks } from "../../../src/core/compaction/checks.js";
import { inWindow } from "../../../src/core/compaction/window.js";

export const configFrom = (ini: IniSections): SmooshConfig => {
  const r = decodeSmooshConfig(ini);
  if (!isRight(r)) throw new Error(`bad test config: ${JSON.stringify(r.left)}`);
  return r.right;
};

type Outstanding =
  | { kind: "fetch"; requestId: number; object: CompactionObject }
  | { kind: "start"; jobId: number; channel: string; object: CompactionObject }
  | { kind: "run"; jobId: number; channel: string; object: CompactionObject }
  | { kind: "list-dbs"; purpose: "enqueue-all-dbs" | "enqueue-all-views" | "rescan" }
  | { kind: "list-ddocs"; db: string; purpose: "enqueue-all-dbs" | "enqueue-all-views" | "rescan" };

export interface StartRecord {
  readonly atMs: number;
  readonly channel: string;
  readonly object: CompactionObject;
  readonly adopt: boolean;
}

export class Sim {
  state: SmooshState;
  nowMs: number;
  readonly startedAtMs: number;
  tickAtMs: number | undefined;
  outstanding: Outstanding[] = [];
  /** Jobs the shell has (start-job emitted, not yet ended), by job id. */
  readonly shellJobs = new Map<number, { channel: string; key: string }>();
  readonly starts: StartRecord[] = [];
  readonly effects: SmooshEffect[] = [];
  suspended = false;
  /** The geo index files listed with a db's design docs (none unless a test says). */
  geoSignaturesOf: (db: string) => readonly string[] = () => [];

  constructor(
    readonly config: SmooshConfig,
    readonly infoOf: (object: CompactionObject) => ObjectInfo | "missing",
    readonly dbs: readonly string[] = [],
    readonly ddocsOf: (db: string) => readonly string[] = () => [],
    startMs = 1_700_000_000_000,
  ) {
    this.nowMs = startMs;
    this.startedAtMs = startMs;
    const r = initSmoosh(config, startMs);
    this.state = r.state;
    this.take(r.effects);
  }

  send(event: SmooshEvent): void {
    if (event.type === "suspend") this.suspended = true;
    if (event.type === "resume") this.suspended = false;
    const r = step(this.state, event, this.nowMs);
    this.state = r.state;
    this.take(r.effects);
    for (const channel of this.state.channels.values()) {
      expect(channelJobCount(this.state, channel.config.name)).toBeLessThanOrEqual(channel.config.concurrency);
    }
    // Every written object not held (running, being checked, backing off) waits where the check policy says: markDirty relies on it.
    expect(misplacedDueChecks(this.state), `due checks off the policy after ${event.type}`).toEqual([]);
  }

  private take(effects: readonly SmooshEffect[]): void {
    for (const e of effects) {
      this.effects.push(e);
      switch (e.type) {
        case "fetch-info":
          this.outstanding.push({ kind: "fetch", requestId: e.requestId, object: e.object });
          break;
        case "start-job":
          this.checkStart(e);
          this.shellJobs.set(e.jobId, { channel: e.channel, key: objectKey(e.object) });
          this.starts.push({ atMs: this.nowMs, channel: e.channel, object: e.object, adopt: e.adopt });
          this.outstanding.push({ kind: "start", jobId: e.jobId, channel: e.channel, object: e.object });
          break;
        case "schedule-tick":
          expect(e.atMs).toBeGreaterThan(this.nowMs);
          this.tickAtMs = e.atMs;
          break;
        case "list-dbs":
          this.outstanding.push({ kind: "list-dbs", purpose: e.purpose });
          break;
        case "list-design-docs":
          this.outstanding.push({ kind: "list-ddocs", db: e.db, purpose: e.purpose });
          break;
        default:
          break;
      }
    }
  }

  /** The invariants of a start, checked when the core asks for it. */
  private checkStart(e: Extract<SmooshEffect, { type: "start-job" }>): void {
    const channel = this.config.channels[e.channel];
    expect(channel, `start in unknown channel ${e.channel}`).toBeDefined();
    if (channel === undefined) return;
    expect(this.suspended, "start while suspended").toBe(false);
    expect(inWindow(channel.window, this.nowMs), "start outside the window").toBe(true);
    expect(this.nowMs, "start during wait_secs").toBeGreaterThanOrEqual(this.startedAtMs + this.config.waitSecs * 1000);
    expect(this.config.ignoredDbs, "start of an ignored db").not.toContain(e.object.db);
    const key = objectKey(e.object);
    const running = [...this.shellJobs.values()];
    expect(running.map((j) => j.key), "object started twice").not.toContain(key);
    expect(running.filter((j) => j.channel === e.channel).length, "concurrency exceeded").toBeLessThan(channel.concurrency);
    expect(channelKindOf(e.object.kind)).toBe(channel.kind);
  }

  /** Answer the `index`-th outstanding request; `ok` picks success or failure. */
  answer(index: number, ok: boolean): void {
    if (this.outstanding.length === 0) return;
    const i = index % this.outstanding.length;
    const [item] = this.outstanding.splice(i, 1);
    if (item === undefined) return;
    switch (item.kind) {
      case "fetch":
        this.send(
          ok
            ? { type: "info-fetched", requestId: item.requestId, info: this.infoOf(item.object) }
            : { type: "info-failed", requestId: item.requestId, error: "boom" },
        );
        return;
      case "start":
        if (ok) {
          this.outstanding.push({ kind: "run", jobId: item.jobId, channel: item.channel, object: item.object });
          this.send({ type: "job-started", jobId: item.jobId });
        } else {
          this.shellJobs.delete(item.jobId);
          this.send({ type: "job-start-failed", jobId: item.jobId, error: "refused" });
        }
        return;
      case "run":
        this.shellJobs.delete(item.jobId);
        this.send(
          ok
            ? { type: "job-finished", jobId: item.jobId, reclaimedBytes: 100 }
            : { type: "job-failed", jobId: item.jobId, error: "crashed" },
        );
        return;
      case "list-dbs":
        this.send({ type: "dbs-listed", purpose: item.purpose, dbs: this.dbs });
        return;
      case "list-ddocs":
        this.send(this.ddocsListed(item.db, item.purpose));
        return;
    }
  }

  private ddocsListed(db: string, purpose: "enqueue-all-dbs" | "enqueue-all-views" | "rescan"): SmooshEvent {
    const geoSignatures = this.geoSignaturesOf(db);
    return { type: "design-docs-listed", purpose, db, ddocs: this.ddocsOf(db), ...(geoSignatures.length > 0 ? { geoSignatures } : {}) };
  }

  /** Move the clock forward by `ms`, delivering every tick asked for on the way. */
  advance(ms: number): void {
    const target = this.nowMs + ms;
    while (this.tickAtMs !== undefined && this.tickAtMs <= target) {
      this.nowMs = Math.max(this.nowMs, this.tickAtMs);
      this.tickAtMs = undefined;
      this.send({ type: "tick" });
    }
    this.nowMs = target;
  }

  /** Answer everything successfully and follow ticks until nothing is left to do (bounded). */
  runToQuiescence(maxRounds = 10_000): void {
    for (let round = 0; round < maxRounds; round++) {
      if (this.outstanding.length > 0) {
        this.answer(0, true);
        continue;
      }
      if (this.tickAtMs === undefined) return;
      this.advance(this.tickAtMs - this.nowMs);
    }
    throw new Error("no quiescence");
  }

  effectsOf<T extends SmooshEffect["type"]>(type: T): Array<Extract<SmooshEffect, { type: T }>> {
    return this.effects.filter((e): e is Extract<SmooshEffect, { type: T }> => e.type === type);
  }
}
