/**
 * The EventSource port over HTTP.
 *
 * Mode `db_updates`: follow `GET /_db_updates?feed=continuous&since=<saved>&heartbeat=...`,
 * saving the last seq through the StatePort after each chunk, so a reconnect or
 * a restart resumes where it stopped (delivery is at-least-once). Mode
 * `polling`: where `_db_updates` is missing (404, no `_global_changes`, 400 on
 * PouchDB Server), compare `_all_dbs` + db update seqs every `pollIntervalMs`;
 * the seqs are saved too, so a restart still sees what changed meanwhile.
 *
 * Design doc changes: after a db is created or updated, its design doc revs
 * (one `_all_docs` range request, coalesced per db) are compared with the
 * saved ones: a new/changed/removed ddoc gives `ddoc-updated`, an unchanged one
 * `view-updated` (its index may have grown). We do not use
 * `_changes?filter=_design`: PouchDB Server 4.2 crashes on it.
 *
 * Completeness: CouchDB's own `_db_updates` is lossy (its global_changes
 * buffers events in memory and drops them when CouchDB restarts). Every
 * reconnect of the feed after the first connection, and a switch to polling,
 * is announced with `source-resumed` so that consumers needing every event
 * (the db updates feed) reconcile with `_all_dbs`. Polling itself compares
 * snapshots, so it misses no db and needs no such signal; its rules are the
 * reconciler's own (`decidePage`).
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import type { EventSource, EventSourceStatus, StoreEvent, StoreEventListener } from "../../ports/events.js";
import type { Logger, Scheduler, StatePort } from "../../ports/shell.js";
import { backoffDelayMs, type BackoffPolicy } from "./backoff.js";
import { describeConnectionError, type CouchClient } from "./client.js";
import { DbUpdatesLine, describeErrors } from "./decoders.js";
import { CouchUnavailableError, errorMessage } from "./errors.js";
import { decidePage, seqMarkOf, type KnownDb, type SeqMark } from "../../core/db-updates/index.js";
import type { CouchStore } from "./store.js";
import { afterDocCount, afterListing, decideDdocCheck, type DdocCheckMemory, type DdocCheckSettings } from "../../core/shared/design-doc-checks.js";

export const EVENTS_STATE_KEY = "couchdb-http.events";
/** Bounds: dbs whose seqs/ddoc revs we remember, dbs waiting for a ddoc check. */
export const maxTrackedDbs = 100_000;
export const maxPendingDdocChecks = 10_000;

const Persisted = t.partial(
  {
    dbUpdatesSeq: t.string,
    /** Db -> seq mark (the numeric prefix; older versions saved the opaque seq, read the same way). */
    pollSeqs: t.record(t.string, t.union([t.number, t.string])),
    ddocRevs: t.record(t.string, t.record(t.string, t.string)),
  },
  "EventsState",
);
type Persisted = t.TypeOf<typeof Persisted>;

export interface EventSourceOptions {
  readonly client: CouchClient;
  readonly store: CouchStore;
  readonly logger: Logger;
  readonly scheduler: Scheduler;
  readonly state?: StatePort | undefined;
  readonly pollIntervalMs: number;
  readonly heartbeatMs: number;
  readonly reconnect: BackoffPolicy;
  readonly random: () => number;
  /** Force polling (tests, servers whose feed is known bad). */
  readonly forcePolling?: boolean | undefined;
  /** How often a written db's design docs may be listed again (see design-doc-checks.ts). */
  readonly ddocChecks: DdocCheckSettings;
}

/** Node-local system dbs that `_db_updates` reports but that are not clustered dbs. */
const ignoredDbs = new Set(["_dbs", "_nodes", "_global_changes"]);

export class CouchEventSource implements EventSource {
  private listener: StoreEventListener | undefined;
  private mode: "db_updates" | "polling" | "starting" = "starting";
  private connected = false;
  private detail: string | undefined;
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private persisted: Persisted = {};
  private readonly ddocQueue = new Set<string>();
  /** Per db: when its design docs were last listed, and what that taught (the pacing rule's memory). */
  private readonly ddocMemory = new Map<string, DdocCheckMemory>();
  private ddocWorker: Promise<void> | undefined;
  private ddocOverflowLogged = false;
  private saving: Promise<void> = Promise.resolve();
  /** A feed connection succeeded before: the next one is a reconnect, and events may have been missed in between. */
  private everConnected = false;

  constructor(private readonly o: EventSourceOptions) {}

  status(): EventSourceStatus {
    const health = this.o.client.health.snapshot();
    const detail = !health.reachable ? `server unreachable: ${health.lastError ?? "?"}` : this.detail;
    return { mode: this.mode, connected: this.connected && health.reachable, detail };
  }

  async start(listener: StoreEventListener): Promise<void> {
    if (this.loop !== undefined) throw new Error("event source already started");
    this.listener = listener;
    this.abort = new AbortController();
    await this.loadState();
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    this.loop = this.run(this.abort.signal, ready).catch((e: unknown) => {
      this.o.logger.error({ error: errorMessage(e) }, "CouchDB event source stopped unexpectedly");
    });
    await started;
  }

  async stop(): Promise<void> {
    this.abort?.abort();
    await this.loop;
    await this.ddocWorker;
    await this.saving;
    this.loop = undefined;
    this.listener = undefined;
    this.connected = false;
  }

  private emit(event: StoreEvent): void {
    try {
      this.listener?.(event);
    } catch (e) {
      this.o.logger.error({ event, error: errorMessage(e) }, "event listener threw");
    }
  }

  private async loadState(): Promise<void> {
    if (this.o.state === undefined) return;
    try {
      const raw = await this.o.state.load(EVENTS_STATE_KEY);
      if (raw === undefined) return;
      const decoded = Persisted.decode(raw);
      if (isLeft(decoded)) {
        this.o.logger.warn({ key: EVENTS_STATE_KEY, problems: describeErrors(decoded.left).slice(0, 3) }, "ignoring saved event source state");
        return;
      }
      this.persisted = { ...decoded.right };
    } catch (e) {
      this.o.logger.warn({ key: EVENTS_STATE_KEY, error: errorMessage(e) }, "could not load event source state");
    }
  }

  private save(): Promise<void> {
    const state = this.o.state;
    if (state === undefined) return Promise.resolve();
    const snapshot = { ...this.persisted };
    this.saving = this.saving.then(() =>
      state.save(EVENTS_STATE_KEY, snapshot).catch((e: unknown) => {
        this.o.logger.warn({ key: EVENTS_STATE_KEY, error: errorMessage(e) }, "could not save event source state");
      }),
    );
    return this.saving;
  }

  private async run(signal: AbortSignal, ready: () => void): Promise<void> {
    let attempt = 0;
    let readyCalled = false;
    const markReady = (): void => {
      if (!readyCalled) {
        readyCalled = true;
        ready();
      }
    };
    while (!signal.aborted) {
      if (this.mode !== "polling" && this.o.forcePolling !== true) {
        const outcome = await this.followDbUpdates(signal, markReady);
        if (outcome === "unsupported") continue;
        if (outcome === "progress") attempt = 0;
      } else {
        if (this.mode !== "polling") {
          this.mode = "polling";
          this.detail = "forced";
        }
        const ok = await this.pollOnce(signal);
        markReady();
        if (signal.aborted) break;
        attempt = ok ? 0 : attempt + 1;
        await sleepUnless(this.o.scheduler, ok ? this.o.pollIntervalMs : Math.max(this.o.pollIntervalMs, backoffDelayMs(attempt, this.o.reconnect, this.o.random)), signal);
        continue;
      }
      markReady(); // never block start() on an unreachable server: keep trying in the background
      if (signal.aborted) break;
      attempt += 1;
      await sleepUnless(this.o.scheduler, backoffDelayMs(attempt, this.o.reconnect, this.o.random), signal);
    }
    markReady();
  }

  /**
   * One connection of the continuous feed. `progress`: rows or heartbeats came
   * then it ended; `failed`: could not connect or broke at once; `unsupported`:
   * the server has no usable `_db_updates` (switched to polling).
   */
  private async followDbUpdates(signal: AbortSignal, ready: () => void): Promise<"progress" | "failed" | "unsupported"> {
    const since = this.persisted.dbUpdatesSeq ?? "now";
    const conn = new AbortController();
    const onAbort = (): void => conn.abort();
    signal.addEventListener("abort", onAbort);
    let gotData = false;
    try {
      const res = await this.o.client.stream(
        "/_db_updates",
        { feed: "continuous", since, heartbeat: this.o.heartbeatMs, timeout: 60_000 },
        this.o.heartbeatMs * 3,
        conn.signal,
      );
      if (res.statusCode !== 200) {
        const text = await res.body.text().catch(() => "");
        if (res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 429) {
          if (this.everConnected) this.emit({ type: "source-resumed", reason: `_db_updates answered ${res.statusCode}; switching to polling` });
          this.mode = "polling";
          this.detail = `_db_updates answered ${res.statusCode}; polling _all_dbs every ${this.o.pollIntervalMs} ms`;
          this.o.logger.info({ status: res.statusCode, body: this.o.client.redact(text.slice(0, 200)) }, "no usable _db_updates; falling back to polling");
          return "unsupported";
        }
        throw new Error(`HTTP ${res.statusCode}`);
      }
      this.mode = "db_updates";
      this.connected = true;
      this.detail = `following _db_updates since ${since === "now" ? "now" : since.split("-")[0]}`;
      this.o.client.health.markUp(this.o.scheduler.nowMs());
      if (this.everConnected) this.emit({ type: "source-resumed", reason: `_db_updates reconnected (since ${since === "now" ? "now" : since.split("-")[0]})` });
      this.everConnected = true;
      ready();
      let buffer = "";
      for await (const chunk of res.body) {
        gotData = true;
        buffer += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
        // A row never spans more than this; a larger buffer means a broken stream.
        if (buffer.length > 1_000_000) throw new Error("_db_updates line too long");
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        let advanced = false;
        for (const line of lines) advanced = this.handleLine(line) || advanced;
        if (advanced) await this.save();
      }
      if (buffer.trim() !== "" && this.handleLine(buffer)) await this.save();
      this.connected = false;
      return "progress";
    } catch (e) {
      this.connected = false;
      if (signal.aborted) return "progress";
      const error = this.o.client.redact(describeConnectionError(e));
      if (!gotData) this.o.client.health.markDown(this.o.scheduler.nowMs(), error);
      this.o.logger.debug({ error }, "_db_updates feed broke; reconnecting");
      return gotData ? "progress" : "failed";
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Returns true when the saved seq advanced. */
  private handleLine(line: string): boolean {
    const trimmed = line.trim();
    if (trimmed === "") return false; // heartbeat
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      this.o.logger.warn({ line: this.o.client.redact(trimmed.slice(0, 200)) }, "GET /_db_updates: line is not JSON; skipped");
      return false;
    }
    const decoded = DbUpdatesLine.decode(parsed);
    if (isLeft(decoded)) {
      this.o.logger.warn({ problems: describeErrors(decoded.left).slice(0, 3) }, "GET /_db_updates: unexpected row; skipped");
      return false;
    }
    const row = decoded.right;
    if ("db_name" in row) {
      this.dbEvent(row.db_name, row.type);
      this.persisted.dbUpdatesSeq = String(row.seq);
      return true;
    }
    this.persisted.dbUpdatesSeq = String(row.last_seq);
    return true;
  }

  private dbEvent(db: string, type: string): void {
    if (ignoredDbs.has(db)) return;
    switch (type) {
      case "created":
        this.emitForDb("db-created", db);
        // A new db has no documents, design docs included: known without asking. Its
        // design docs are listed once it has gained documents (the pacing rule's doc count).
        if (this.persisted.ddocRevs?.[db] === undefined) {
          this.rememberListing(db, afterListing(undefined, this.o.ddocChecks, { changed: false, ddocCount: 0, docCount: 0 }, this.o.scheduler.nowMs()));
        }
        this.queueDdocCheck(db);
        break;
      case "updated":
        this.emitForDb("db-updated", db);
        this.queueDdocCheck(db);
        break;
      case "deleted":
        this.emitForDb("db-deleted", db);
        this.ddocMemory.delete(db);
        if (this.persisted.ddocRevs !== undefined) delete this.persisted.ddocRevs[db];
        break;
      default:
        this.o.logger.debug({ db, type }, "ignoring unknown _db_updates type");
    }
  }

  /** In shard granularity a clustered db's event is delivered for each of its shard objects. */
  private emitForDb(type: "db-created" | "db-updated" | "db-deleted", db: string): void {
    const shards = this.o.store.shardsByDb.get(db);
    if (shards === undefined || shards.length === 0) {
      this.emit({ type, db });
      return;
    }
    for (const shard of shards) this.emit({ type, db: shard });
  }

  // --- design docs -------------------------------------------------------------

  /**
   * A written db's design docs are listed again when the pacing rule says
   * (src/core/shared/design-doc-checks.ts): not after every write. Dbs wait in
   * a bounded set; one worker serves them in rounds, sleeping until the
   * earliest one is due.
   */
  private queueDdocCheck(db: string): void {
    if (this.ddocQueue.size >= maxPendingDdocChecks && !this.ddocQueue.has(db)) {
      if (!this.ddocOverflowLogged) {
        this.ddocOverflowLogged = true;
        this.o.logger.warn({ limit: maxPendingDdocChecks }, "too many dbs waiting for a design doc check; some skipped");
      }
      return;
    }
    this.ddocQueue.add(db);
    this.ddocWorker ??= this.drainDdocChecks().finally(() => {
      this.ddocWorker = undefined;
    });
  }

  private async drainDdocChecks(): Promise<void> {
    while (this.ddocQueue.size > 0 && this.abort?.signal.aborted === false) {
      const nextDueMs = await this.ddocRound();
      if (nextDueMs === undefined || this.abort?.signal.aborted !== false) continue;
      await this.sleepUnlessStopped(Math.max(1, nextDueMs - this.o.scheduler.nowMs()));
    }
  }

  /**
   * `stop()` waits for the worker: a pause must end when the source stops.
   * (sleepUnless removes its abort listener when the timer fires: one added per
   * pause and left behind piled up on the source's signal for as long as it ran.)
   */
  private sleepUnlessStopped(delayMs: number): Promise<void> {
    const signal = this.abort?.signal;
    return signal === undefined ? Promise.resolve() : sleepUnless(this.o.scheduler, delayMs, signal);
  }

  /** Serve every queued db that is due; returns when the next waiting one is. */
  private async ddocRound(): Promise<number | undefined> {
    const nowMs = this.o.scheduler.nowMs();
    const toList: string[] = [];
    const needCount: string[] = [];
    let nextDueMs: number | undefined;
    for (const db of this.ddocQueue) {
      const decision = decideDdocCheck(this.ddocMemory.get(db), this.o.ddocChecks, nowMs);
      if (decision.kind === "list") toList.push(db);
      else if (decision.kind === "need-doc-count") needCount.push(db);
      else nextDueMs = Math.min(nextDueMs ?? Infinity, decision.untilMs);
    }
    for (const db of await this.grownDbs(needCount)) toList.push(db);
    for (const db of [...toList, ...needCount]) this.ddocQueue.delete(db);
    for (const db of toList) {
      if (this.abort?.signal.aborted !== false) break;
      await this.listDesignDocs(db);
    }
    return nextDueMs;
  }

  /** Dbs (known to have no design docs) whose doc_count rose since their listing: from infos already read, else one batched read. */
  private async grownDbs(dbs: readonly string[]): Promise<string[]> {
    const grown: string[] = [];
    const unknown: string[] = [];
    for (const db of dbs) {
      const memory = this.ddocMemory.get(db)!;
      const info = this.o.store.recentInfos.since(db, memory.lastListedAtMs + 1);
      if (info === undefined) unknown.push(db);
      else if (afterDocCount(memory, info.docCount).kind === "list") grown.push(db);
    }
    if (unknown.length === 0) return grown;
    let infos: Map<string, { readonly docCount: number }>;
    try {
      infos = await this.o.store.clusteredDbInfos(unknown);
    } catch (e) {
      if (!(e instanceof CouchUnavailableError)) this.o.logger.warn({ error: errorMessage(e) }, "design doc check: db infos failed");
      return [...grown, ...unknown]; // not knowing, list: never miss a design doc
    }
    for (const db of unknown) {
      const info = infos.get(db);
      if (info !== undefined && afterDocCount(this.ddocMemory.get(db)!, info.docCount).kind === "list") grown.push(db);
    }
    return grown;
  }

  private async listDesignDocs(db: string): Promise<void> {
    try {
      const { ddocs, docCount: countAtListing } = await this.o.store.designDocsAndCount(db);
      const known = this.persisted.ddocRevs?.[db] ?? {};
      const now: Record<string, string> = {};
      let changed = false;
      for (const d of ddocs) {
        now[d.id] = d.rev;
        if (known[d.id] !== d.rev) {
          changed = true;
          this.emitDdoc("ddoc-updated", db, d.id);
        } else {
          this.emitDdoc("view-updated", db, d.id);
        }
      }
      for (const id of Object.keys(known)) {
        if (now[id] === undefined) {
          changed = true;
          this.emitDdoc("ddoc-updated", db, id); // deleted: the core cleans its index up
        }
      }
      const docCount = countAtListing ?? this.o.store.recentInfos.since(db, 0)?.docCount;
      this.rememberListing(db, afterListing(this.ddocMemory.get(db), this.o.ddocChecks, { changed, ddocCount: ddocs.length, docCount }, this.o.scheduler.nowMs()));
      if (changed) {
        const revs = (this.persisted.ddocRevs ??= {});
        if (Object.keys(now).length === 0) delete revs[db];
        else if (revs[db] !== undefined || Object.keys(revs).length < maxTrackedDbs) revs[db] = now;
        await this.save();
      }
    } catch (e) {
      if (!(e instanceof CouchUnavailableError)) this.o.logger.warn({ db, error: errorMessage(e) }, "design doc check failed");
    }
  }

  /** Bounded like the other per-db memories: the oldest listing is forgotten first (it is then simply listed again). */
  private rememberListing(db: string, memory: DdocCheckMemory): void {
    this.ddocMemory.delete(db);
    this.ddocMemory.set(db, memory);
    if (this.ddocMemory.size > maxTrackedDbs) {
      const oldest = this.ddocMemory.keys().next();
      if (oldest.done !== true) this.ddocMemory.delete(oldest.value);
    }
  }

  private emitDdoc(type: "ddoc-updated" | "view-updated", db: string, ddoc: string): void {
    const shards = this.o.store.shardsByDb.get(db);
    if (shards === undefined || shards.length === 0) this.emit({ type, db, ddoc });
    else for (const shard of shards) this.emit({ type, db: shard, ddoc });
  }

  // --- polling -----------------------------------------------------------------------

  /** One poll. The first ever (nothing saved) only records a baseline. */
  private async pollOnce(signal: AbortSignal): Promise<boolean> {
    try {
      const client = this.o.client;
      const names = (await this.o.store.listDbs()).map((n) => n);
      // Shard granularity lists shard objects; polling compares clustered dbs.
      const dbs = this.o.store.shardsByDb.size > 0 ? [...this.o.store.shardsByDb.keys()] : names;
      const infos = await this.clusteredInfos(dbs);
      if (signal.aborted) return true;
      const previous = this.persisted.pollSeqs;
      const known = new Map<string, KnownDb>(Object.entries(previous ?? {}).map(([db, seq]) => [db, { seq: seqMarkOf(seq) }]));
      const server = new Map<string, SeqMark>([...infos].map(([db, seq]) => [db, seqMarkOf(seq)]));
      // The first poll ever only records a baseline; then the reconciler's rules, over one page that is everything.
      const decision = decidePage({ known, server, adopt: () => previous === undefined, room: maxTrackedDbs - known.size });
      for (const event of decision.events) this.dbEvent(event.db, event.type);
      const next: Record<string, SeqMark> = {};
      for (const [db, entry] of known) if (server.has(db) && entry.seq !== undefined) next[db] = entry.seq;
      for (const [db, seq] of decision.record) next[db] = seq;
      const changed = previous === undefined || decision.events.length > 0 || decision.record.length > 0;
      this.persisted.pollSeqs = next;
      // Nothing moved: no need to rewrite up to 100,000 seqs every interval.
      if (changed) await this.save();
      this.connected = true;
      client.health.markUp(this.o.scheduler.nowMs());
      return true;
    } catch (e) {
      this.connected = false;
      if (!(e instanceof CouchUnavailableError)) this.o.logger.warn({ error: errorMessage(e) }, "polling for db changes failed");
      return false;
    }
  }

  private async clusteredInfos(dbs: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const infos = this.o.store.shardsByDb.size > 0 ? await this.o.store.clusteredDbInfos(dbs) : await this.o.store.dbInfos(dbs);
    for (const [db, info] of infos) out.set(db, info.updateSeq);
    return out;
  }
}

const sleepUnless = async (scheduler: Scheduler, delayMs: number, signal: AbortSignal): Promise<void> => {
  if (signal.aborted) return;
  await new Promise<void>((resolve) => {
    const onAbort = (): void => {
      cancel();
      resolve();
    };
    const cancel = scheduler.setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, delayMs);
    signal.addEventListener("abort", onAbort, { once: true });
  });
};
