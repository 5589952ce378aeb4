/**
 * The reconciler in the runtime, on virtual time: the real memory store, the
 * real service and knowledge, a memory StatePort. Paced (100,000 dbs), a
 * baseline first, resumable after a crash, lossless across a crash between
 * a feed write and the next checkpoint, and triggered by the writer's drops.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore } from "../../src/adapters/memory/index.js";
import { createMemoryStatePort, type MemoryStatePort } from "../../src/adapters/state/index.js";
import { createLocalAuthenticator } from "../../src/http/auth/index.js";
import type { IniSections } from "../../src/core/shared/ini.js";
import type { EventSource } from "../../src/ports/events.js";
import type { DbListing, DocumentStore } from "../../src/ports/store.js";
import { dbUpdatesSubsystem, type DbUpdatesSubsystem } from "../../src/runtime/db-updates/index.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";
import { ADMIN, silentLogger } from "./helpers.js";

interface ListingCall {
  readonly atMs: number;
  readonly method: "listDbsAfter" | "dbUpdateSeqs";
  readonly after?: string | undefined;
}

/** The real store, its listing calls recorded with their (virtual) time. */
function recorded(store: MemoryStore, scheduler: VirtualScheduler, dbsPerRequest = 100): { store: DocumentStore & DbListing; calls: ListingCall[] } {
  const calls: ListingCall[] = [];
  return {
    calls,
    store: {
      ensureDb: (db) => store.ensureDb(db),
      getDoc: (db, id) => store.getDoc(db, id),
      bulkDocs: (db, docs) => store.bulkDocs(db, docs),
      changes: (db, q) => store.changes(db, q),
      currentSeq: (db) => store.currentSeq(db),
      listDbsAfter: (after, limit) => {
        calls.push({ atMs: scheduler.nowMs(), method: "listDbsAfter", after });
        return store.listDbsAfter(after, limit);
      },
      dbUpdateSeqs: (dbs) => {
        for (let i = 0; i < dbs.length; i += dbsPerRequest) calls.push({ atMs: scheduler.nowMs(), method: "dbUpdateSeqs" });
        return store.dbUpdateSeqs(dbs);
      },
      dbInfosBatchSize: dbsPerRequest,
    },
  };
}

interface Running {
  readonly subsystem: DbUpdatesSubsystem;
  readonly source: EventSource;
  readonly calls: ListingCall[];
}

const iniWith = (gc: Record<string, string>): IniSections => ({
  admins: { [ADMIN.name]: ADMIN.password },
  chttpd_auth: { iterations: "1000" },
  global_changes: { max_event_delay: "25", max_write_delay: "25", ...gc },
});

async function start(store: MemoryStore, scheduler: VirtualScheduler, state: MemoryStatePort, gc: Record<string, string> = {}, dbsPerRequest = 100): Promise<Running> {
  const ini = iniWith(gc);
  const { store: listing, calls } = recorded(store, scheduler, dbsPerRequest);
  const authenticator = await createLocalAuthenticator({ config: ini, clock: scheduler });
  const subsystem = dbUpdatesSubsystem({ store: listing, scheduler, config: ini, logger: silentLogger, authenticator, state });
  const source = store.createEventSource();
  await subsystem.start();
  await source.start((event) => subsystem.handleStoreEvent(event));
  return { subsystem, source, calls };
}

/** A crash: the process is gone (its virtual clock never runs again); the state is what was saved by then. */
async function crash(running: Running, state: MemoryStatePort): Promise<MemoryStatePort> {
  await running.source.stop();
  const saved: Record<string, unknown> = {};
  for (const key of state.keys()) saved[key] = await state.load(key);
  return createMemoryStatePort(saved);
}

const advanceUntil = async (scheduler: VirtualScheduler, done: () => boolean | Promise<boolean>, stepMs = 100, maxMs = 3_600_000): Promise<void> => {
  for (let spent = 0; !(await done()); spent += stepMs) {
    if (spent > maxMs) throw new Error("not done within the virtual time allowed");
    await scheduler.advanceByAsync(stepMs);
  }
};

const passDone = (r: Running) => (): boolean => r.subsystem.reconciler?.status().active === false;
const feedIds = async (r: Running): Promise<string[]> => (await r.subsystem.service.readChanges({})).results.map((x) => x.id).sort();

/** Most store calls in any window [t, t + 1 s). */
const peakCallsPerSecond = (calls: readonly ListingCall[]): number => {
  let peak = 0;
  for (const c of calls) peak = Math.max(peak, calls.filter((d) => d.atMs >= c.atMs && d.atMs < c.atMs + 1000).length);
  return peak;
};

describe("reconciliation at scale: 100,000 dbs", () => {
  it("a first pass records a baseline at most reconcile_requests_per_sec calls a second; a later one finds exactly what was missed", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    for (let i = 0; i < 100_000; i++) store.createDb(`userdb-${i.toString(16).padStart(6, "0")}`);
    const state = createMemoryStatePort();
    const r = await start(store, scheduler, state);
    await advanceUntil(scheduler, passDone(r), 1_000);
    const m = r.subsystem.metrics();
    expect([m.known_dbs, m.reconcile_events, m.reconcile_pages]).toEqual([100_000, 0, 1_001]);
    // 1,001 pages of 100 names (one `_all_dbs` and one `_dbs_info` each): at 10 calls a second, 200 s.
    expect(scheduler.nowMs()).toBeGreaterThanOrEqual(200_000);
    const firstPass = r.calls.filter((c) => c.atMs <= scheduler.nowMs());
    expect(peakCallsPerSecond(firstPass.slice(0, 200))).toBeLessThanOrEqual(10);
    expect(await feedIds(r)).toEqual([]);
    // Saved in shards: each a fraction of the whole.
    expect(state.keys().filter((k) => k.startsWith("db-updates.known.")).length).toBe(64);

    // Events lost behind upholster's back (its source is not listening), then the source says so.
    await r.source.stop();
    store.deleteDb("userdb-000010");
    store.createDb("userdb-new");
    store.putDoc("userdb-000020", { _id: "x" });
    const before = r.calls.length;
    r.subsystem.handleStoreEvent({ type: "source-resumed", reason: "test" });
    await advanceUntil(scheduler, async () => passDone(r)() && (await feedIds(r)).length === 3, 1_000);
    expect(await feedIds(r)).toEqual(["created:userdb-new", "deleted:userdb-000010", "updated:userdb-000020"]);
    expect(peakCallsPerSecond(r.calls.slice(before, before + 200))).toBeLessThanOrEqual(10);
    await r.subsystem.stop();
  }, 240_000);

  it("a listing that reads fewer dbs a request (a server's lower max_db_number_for_dbs_info_req) is paced by the requests it really makes", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    for (let i = 0; i < 3_000; i++) store.createDb(`userdb-${i.toString(16).padStart(6, "0")}`);
    const r = await start(store, scheduler, createMemoryStatePort(), {}, 10);
    await advanceUntil(scheduler, passDone(r), 1_000);
    expect(r.subsystem.metrics().known_dbs).toBe(3_000);
    // 31 pages: each one `_all_dbs` and ten `_dbs_info` of 10 names, at 10 calls a second.
    expect(r.calls.filter((c) => c.method === "dbUpdateSeqs").length).toBeGreaterThanOrEqual(300);
    expect(peakCallsPerSecond(r.calls)).toBeLessThanOrEqual(11);
    expect(scheduler.nowMs()).toBeGreaterThanOrEqual(30_000);
    await r.subsystem.stop();
  });
});

describe("reconciliation: restarts", () => {
  it("a first start records a baseline (no events for dbs that were there); a later start emits what changed while down", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    for (const db of ["a", "b", "c"]) store.createDb(db);
    const state = createMemoryStatePort();
    const first = await start(store, scheduler, state);
    await advanceUntil(scheduler, passDone(first));
    expect(await feedIds(first)).toEqual([]);
    await first.source.stop();
    await first.subsystem.stop();

    store.deleteDb("a");
    store.createDb("d");
    store.putDoc("b", { _id: "x" });
    const second = await start(store, scheduler, state);
    await advanceUntil(scheduler, async () => (await feedIds(second)).length === 3);
    expect(await feedIds(second)).toEqual(["created:d", "deleted:a", "updated:b"]);
    await advanceUntil(scheduler, passDone(second));
    await second.subsystem.stop();
  });

  it("a pass interrupted by a crash resumes from its saved cursor", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    for (let i = 0; i < 60; i++) store.createDb(`db${String(i).padStart(2, "0")}`);
    const state = createMemoryStatePort();
    const gc = { reconcile_page_size: "5", reconcile_requests_per_sec: "1" };
    const first = await start(store, scheduler, state, gc);
    // 12 pages at 2 calls a second: the 5 s checkpoint has saved a cursor well before the end.
    await scheduler.advanceByAsync(12_000);
    expect(first.subsystem.reconciler?.status().active).toBe(true);
    const savedState = await crash(first, state);
    const saved = (await savedState.load("db-updates.reconcile")) as { pass: { cursor?: string } };
    expect(saved.pass.cursor).toMatch(/^db\d\d$/);

    const second = await start(store, new VirtualScheduler(), savedState, gc);
    expect(second.calls[0]?.after).toBe(saved.pass.cursor);
    await second.subsystem.reconciler?.halt();
  });

  it("a crash between a feed write and the next checkpoint costs a repeat, never a loss (uncertain dbs are stated again)", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    const state = createMemoryStatePort();
    const first = await start(store, scheduler, state);
    await advanceUntil(scheduler, passDone(first)); // ends with a checkpoint: the next is 5 s away
    store.createDb("x");
    await advanceUntil(scheduler, async () => (await feedIds(first)).includes("created:x"));
    // The knowledge saw the write, but no checkpoint yet: only "x is uncertain" was saved, before the write.
    const savedState = await crash(first, state);
    expect(((await savedState.load("db-updates.reconcile")) as { uncertain?: string[] }).uncertain).toEqual(["x"]);

    store.deleteDb("x"); // while upholster is down: no one hears it
    const scheduler2 = new VirtualScheduler();
    const second = await start(store, scheduler2, savedState);
    await advanceUntil(scheduler2, async () => (await feedIds(second)).includes("deleted:x"));
    await advanceUntil(scheduler2, passDone(second));
    await second.subsystem.stop();
  });
});

describe("reconciliation: the feed's own ordering", () => {
  it("a db deleted and re-created within one write window (one write has both rows) is looked at again: the feed ends with created", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    store.createDb("x");
    const r = await start(store, scheduler, createMemoryStatePort());
    await advanceUntil(scheduler, passDone(r));
    store.deleteDb("x");
    store.createDb("x"); // no event is lost: only the write's order of created:x and deleted:x is wrong
    const order = async (): Promise<string[]> => (await r.subsystem.service.readChanges({})).results.map((x) => x.id);
    await advanceUntil(scheduler, async () => (await order()).at(-1) === "created:x" && r.subsystem.reconciler?.status().rechecks === 0);
    expect(await order()).toEqual(["deleted:x", "created:x"]);
    await r.subsystem.stop();
  });
});

describe("reconciliation: the writer's own drops", () => {
  it("keys the writer dropped at its bound during an outage are found again once the store is back", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    const state = createMemoryStatePort();
    const r = await start(store, scheduler, state, { max_pending_keys: "2", retry_initial_delay_ms: "50", retry_max_delay_ms: "200" });
    await advanceUntil(scheduler, passDone(r));
    store.setAvailable(false);
    for (const db of ["p", "q", "r", "s"]) store.createDb(db);
    store.setAvailable(true); // held events arrive; the writer can keep only 2 of them while its write fails
    store.setAvailable(false);
    await scheduler.advanceByAsync(500);
    expect(r.subsystem.metrics().dropped_events).toBeGreaterThan(0);
    store.setAvailable(true);
    await advanceUntil(scheduler, async () => (await feedIds(r)).length === 4);
    expect(await feedIds(r)).toEqual(["created:p", "created:q", "created:r", "created:s"]);
    await r.subsystem.stop();
  });
});
