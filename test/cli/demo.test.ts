/**
 * The demo workload of `upholster run`, on a virtual clock: besides the
 * writes, it deletes and creates dbs now and then, so the db updates feed
 * shows `created` and `deleted`, not only `updated`.
 */
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/adapters/memory/index.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";
import type { StoreEvent } from "../../src/ports/events.js";
import { DEMO_SETTINGS, prepareDemo } from "../../src/cli/demo.js";

describe("the demo workload", () => {
  it("deletes and creates demo dbs every recreateDbEveryMs while running, and stops when stopped", async () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
    const events: StoreEvent[] = [];
    await store.createEventSource().start((event) => events.push(event));
    const demo = prepareDemo({ store, scheduler, logger: createRecordingLogger() });
    demo.prefill();
    demo.start();
    await scheduler.advanceByAsync(3 * DEMO_SETTINGS.recreateDbEveryMs + 1);
    const kinds = (type: StoreEvent["type"]) => events.filter((e) => e.type === type && e.db !== undefined && demo.dbs.includes(e.db));
    expect(kinds("db-deleted")).toHaveLength(3);
    // Created again at once: the dbs are all there, with their design docs.
    expect(kinds("db-created").length).toBe(demo.dbs.length + 3);
    expect((await store.listDbs()).filter((db) => demo.dbs.includes(db)).sort()).toEqual([...demo.dbs].sort());
    demo.stop();
    const before = events.length;
    await scheduler.advanceByAsync(3 * DEMO_SETTINGS.recreateDbEveryMs);
    expect(events.length).toBe(before);
  });
});
