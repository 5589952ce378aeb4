/**
 * The README's embedding example, run as a test: upholster inside another
 * program, on the in-memory store, with a virtual clock.
 */
import { describe, expect, it } from "vitest";
import {
  createMemoryStore,
  createRecordingLogger,
  createUpholster,
  InvalidConfigError,
  loadConfig,
  VirtualScheduler,
} from "../../src/index.js";

describe("embedding upholster", () => {
  it("the README example: a db full of garbage is compacted, status and HTTP agree", async () => {
    // --- README example (from "upholster" in a real project) -------------------
    const scheduler = new VirtualScheduler(); // omit for wall-clock time
    const store = createMemoryStore({ scheduler });
    const upholster = createUpholster({
      store,
      events: store.createEventSource(),
      scheduler,
      config: { smoosh: { wait_secs: "10" }, "smoosh.ratio_dbs": { min_priority: "3.0" } }, // CouchDB's INI keys
      logger: createRecordingLogger(), // default: pino JSON lines on stdout
      http: { port: 0 }, // optional: /_smoosh/status, /_smoosh/enqueue, ... on 127.0.0.1
    });
    await upholster.start();

    store.createDb("invoices");
    const revs = new Map<string, string>();
    for (let round = 0; round < 6; round++) {
      const docs = Array.from({ length: 1000 }, (_, i) => ({ _id: `inv-${i}`, _rev: revs.get(`inv-${i}`), round, lines: "x".repeat(500) }));
      for (const result of store.writeDocs("invoices", docs)) if (result.ok) revs.set(result.id, result.rev);
    }
    upholster.enqueue("invoices"); // or wait for the next write after `staleness`

    await scheduler.advanceByAsync(60_000); // a minute of virtual time
    const { finished, bytesReclaimed } = upholster.metrics().smoosh; // also enqueued, started, failed, ...
    const status = await fetch(`${upholster.httpAddress()!.url}/_smoosh/status`).then((r) => r.json());
    await upholster.stop();
    // --- end of example ---------------------------------------------------------

    expect(finished).toBe(1);
    expect(bytesReclaimed).toBeGreaterThan(0);
    const info = await store.dbInfo("invoices");
    expect(info!.fileBytes / info!.activeBytes).toBeLessThan(1.5);
    expect(status).toEqual({ channels: expect.objectContaining({ ratio_dbs: { waiting: { size: 0, min: 0, max: 0 }, starting: 0, active: 0 } }) });
    expect(upholster.httpAddress()).toBeUndefined();
  });

  it("rejects INI sections that do not decode, naming section, key and value", () => {
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler });
    const attempt = () =>
      createUpholster({ store, events: store.createEventSource(), scheduler, config: { "smoosh.ratio_dbs": { concurrency: "many" } } });
    expect(attempt).toThrow(InvalidConfigError);
    expect(attempt).toThrow('[smoosh.ratio_dbs] concurrency = "many"');
  });

  it("takes an already loaded config, and runs without HTTP", async () => {
    const loaded = await loadConfig({ overrides: { smoosh: { db_channels: "ratio_dbs", view_channels: "", cleanup_channels: "" } } });
    expect(loaded._tag).toBe("Right");
    if (loaded._tag !== "Right") return;
    const scheduler = new VirtualScheduler();
    const store = createMemoryStore({ scheduler });
    const upholster = createUpholster({ store, events: store.createEventSource(), scheduler, config: loaded.right, logger: createRecordingLogger() });
    await upholster.start();
    expect(Object.keys(upholster.smooshStatus().channels)).toEqual(["ratio_dbs"]);
    expect(upholster.httpAddress()).toBeUndefined();
    expect(upholster.status().events).toEqual({ mode: "push", connected: true });
    await upholster.stop();
  });
});
