import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createMemoryStore } from "../../src/adapters/memory/index.js";
import { realScheduler, VirtualScheduler } from "../../src/runtime/scheduler.js";
import { createDbUpdatesService } from "../../src/runtime/db-updates/index.js";
import { decodeDbUpdatesConfig } from "../../src/core/db-updates/index.js";
import { ADMIN_AUTH, rawGet, rawStream, silentLogger, startHarness, waitFor } from "./helpers.js";

interface Row {
  db_name: string;
  type: string;
  seq: string;
}

const feedKeys = async (url: string): Promise<Set<string>> => {
  const r = await rawGet(`${url}/_db_updates`, { authorization: ADMIN_AUTH });
  return new Set((JSON.parse(r.body) as { results: Row[] }).results.map((x) => `${x.type}:${x.db_name}`));
};

describe("faults", () => {
  it("the store goes away and comes back while events flow: every event is delivered, none invented", async () => {
    const h = await startHarness();
    try {
      const expected = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const db = `flow_${i}`;
        h.store.createDb(db);
        h.store.putDoc(db, { _id: "d" });
        expected.add(`created:${db}`).add(`updated:${db}`);
        if (i === 5) h.store.setAvailable(false);
        if (i === 15) {
          // Writes fail while it is down: the service keeps the keys and retries.
          await waitFor(() => h.subsystem.metrics().write_failures > 0, "a failed write");
          expect(h.subsystem.metrics().server_pending_updates).toBeGreaterThan(0);
          h.store.setAvailable(true);
        }
      }
      await waitFor(async () => (await feedKeys(h.url)).size >= expected.size, "all events");
      const seen = await feedKeys(h.url);
      for (const k of expected) expect(seen.has(k)).toBe(true);
      for (const k of seen) expect(expected.has(k)).toBe(true);
      const m = h.subsystem.metrics();
      expect(m.dropped_events).toBe(0);
      expect(m.write_failures).toBeGreaterThan(0);
      await waitFor(() => h.subsystem.metrics().server_pending_updates === 0, "nothing pending");
    } finally {
      await h.close();
    }
  });

  it("upholster restarts (a new service on the same store): persisted events are still served; stop flushes pending ones", async () => {
    const scheduler = realScheduler({ unref: true });
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    const first = await startHarness({ store, ini: { global_changes: { max_event_delay: "5", max_write_delay: "60000" } } });
    store.createDb("before_restart");
    // The write window is a minute: the event is only pending when we stop; stop must flush it.
    await waitFor(() => first.subsystem.metrics().server_pending_updates > 0, "the event to be pending");
    await first.close();
    const second = await startHarness({ store });
    try {
      expect((await feedKeys(second.url)).has("created:before_restart")).toBe(true);
      store.createDb("after_restart");
      await waitFor(async () => (await feedKeys(second.url)).has("created:after_restart"), "the new event");
      expect(await feedKeys(second.url)).toEqual(new Set(["created:before_restart", "created:after_restart"]));
    } finally {
      await second.close();
    }
  });

  it("on a virtual clock, any interleaving of outages keeps every accepted event (at-least-once) and invents none", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ db: fc.constantFrom("a", "b", "c", "d"), type: fc.constantFrom("db-created", "db-updated", "db-deleted" as const), gapMs: fc.integer({ min: 0, max: 300 }), down: fc.boolean() }), { minLength: 1, maxLength: 25 }),
        async (steps) => {
          const scheduler = new VirtualScheduler();
          const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
          const { config } = decodeDbUpdatesConfig({ global_changes: { max_write_delay: "50", retry_initial_delay_ms: "10", retry_max_delay_ms: "80" } });
          const service = createDbUpdatesService({ store, scheduler, config, logger: silentLogger });
          await service.start();
          const expected = new Set<string>();
          for (const step of steps) {
            store.setAvailable(!step.down);
            service.handleStoreEvent({ type: step.type, db: step.db });
            expected.add(`${step.type.slice(3)}:${step.db}`);
            await scheduler.advanceByAsync(step.gapMs);
          }
          store.setAvailable(true);
          await scheduler.advanceByAsync(1_000);
          const page = await service.readChanges({});
          expect(new Set(page.results.map((r) => r.id))).toEqual(expected);
          expect(service.metrics().server_pending_updates).toBe(0);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("feeds across a store outage", () => {
  it("an open continuous feed survives the store going away and delivers what was written meanwhile", async () => {
    const h = await startHarness();
    try {
      const s = rawStream(`${h.url}/_db_updates?feed=continuous&since=now&heartbeat=100`, { authorization: ADMIN_AUTH });
      await waitFor(() => s.body.includes("\n"), "the feed to be open");
      h.store.setAvailable(false);
      h.store.createDb("during_outage");
      await waitFor(() => s.body.split("\n").length > 3, "heartbeats while the store is down");
      expect(s.ended).toBe(false);
      h.store.setAvailable(true);
      await waitFor(() => s.body.includes('"db_name":"during_outage","type":"created"'), "the event after the outage");
      s.abort();
    } finally {
      await h.close();
    }
  });
});
