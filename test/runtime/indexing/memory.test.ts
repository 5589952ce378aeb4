/**
 * The indexer on the memory store (its real view engine, a virtual clock):
 * built without any query, caught up after a burst, autoupdate respected,
 * stale index files cleaned, a failing or hanging backend isolated, an
 * outage retried, queries noted.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { IndexBackend } from "../../../src/ports/index-backend.js";
import { tapViewQueries } from "../../../src/runtime/indexing/query-tap.js";
import { DEFAULT_VIEW_QUERY } from "../../../src/ports/views.js";
import { lagOf, rig, until, updateDocs, VIEWS, writeDocs, type Rig } from "./helpers.js";

let current: Rig | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});
const start = async (...args: Parameters<typeof rig>): Promise<Rig> => (current = await rig(...args));

describe("background indexing on the memory store", () => {
  it("builds a view after a design doc and docs are written, without any query", async () => {
    const r = await start();
    r.store.createDb("orders");
    r.store.putDesignDoc("orders", "app", VIEWS);
    writeDocs(r.store, "orders", 300);
    await until(r, async () => (await lagOf(r, "orders")) === 0, "the view up to date");
    const info = await r.store.viewGroupInfo("orders", "_design/app");
    expect(info.view_index.update_seq).toBe((await r.store.dbInfo("orders"))?.updateSeqNumber);
    expect(r.indexing.daemon.status().indexes).toEqual([expect.objectContaining({ db: "orders", name: "_design/app", state: "fresh", lag: 0 })]);
  });

  it("catches up after a burst of updates, and builds again only what changed", async () => {
    const r = await start();
    r.store.createDb("burst");
    r.store.putDesignDoc("burst", "app", VIEWS);
    writeDocs(r.store, "burst", 200);
    await until(r, async () => (await lagOf(r, "burst")) === 0, "the first build");
    const started = r.indexing.daemon.metrics().buildsStarted;
    for (let round = 1; round <= 5; round++) await updateDocs(r.store, "burst", 200, round);
    await until(r, async () => (await lagOf(r, "burst")) === 0, "the index caught up");
    expect(r.indexing.daemon.metrics().buildsStarted).toBeGreaterThan(started);
    expect(r.indexing.daemon.metrics().buildsFailed).toBe(0);
  });

  it("respects autoupdate: false (and per type), and leaves other languages alone", async () => {
    const r = await start();
    r.store.createDb("mixed");
    writeDocs(r.store, "mixed", 50);
    r.store.putDesignDoc("mixed", "off", { ...VIEWS, autoupdate: false });
    r.store.putDesignDoc("mixed", "views_off", { views: { x: { map: "function (doc) { emit(1); }" } }, autoupdate: { views: false } });
    r.store.putDesignDoc("mixed", "erl", { views: { y: { map: "fun({Doc}) -> ok end." } }, language: "erlang" });
    r.store.putDesignDoc("mixed", "on", { views: { z: { map: "function (doc) { emit(doc.n); }" } } });
    await until(r, async () => (await lagOf(r, "mixed", "_design/on")) === 0, "the autoupdating view built");
    await until(r, () => r.indexing.daemon.status().queue.waiting === 0 && r.indexing.daemon.metrics().buildsRunning === 0, "nothing left to build");
    for (const ddoc of ["_design/off", "_design/views_off"]) {
      expect((await r.store.viewGroupInfo("mixed", ddoc)).view_index.update_seq).toBe(0);
    }
    const lags = await r.indexing.daemon.lag("mixed");
    expect(lags.filter((l) => !l.autoUpdate).map((l) => l.name).sort()).toEqual(["_design/off", "_design/views_off"]);
    expect(r.logger.text()).toMatch(/_design\/erl.*erlang/);
  });

  it("removes index files no design doc uses any more after a design doc change", async () => {
    const r = await start();
    r.store.createDb("clean");
    const put = r.store.putDesignDoc("clean", "app", VIEWS);
    writeDocs(r.store, "clean", 200);
    await until(r, async () => (await lagOf(r, "clean")) === 0, "the first index");
    const withOne = r.store.totals().viewFileBytes;
    const cleanupsBefore = r.indexing.daemon.metrics().cleanups;
    r.store.putDesignDoc("clean", "app", { views: { other: { map: "function (doc) { emit(doc.n * 2); }" } } }, put.ok ? put.rev : undefined);
    await until(r, async () => (await lagOf(r, "clean")) === 0 && r.indexing.daemon.metrics().cleanups > cleanupsBefore, "the new index built and the old one cleaned");
    // The old file is gone: what is left is the new index alone, about the size of the old.
    expect(r.store.totals().viewFileBytes).toBeLessThan(withOne * 1.5);
    expect(r.logger.text()).toContain("ken: stale index files cleaned");
  });

  it("a backend that throws, or hangs, is logged and retried; the others go on", async () => {
    const broken: IndexBackend = {
      type: "broken",
      field: "indexes",
      indexesOf: (_db, ddocs) => ({ indexes: ddocs.filter((d) => typeof d.body === "object" && d.body !== null && "indexes" in d.body).map((d) => ({ type: "broken", key: d.id, ddocs: [d.id], name: d.id, field: "indexes", entry: "x" })), problems: [] }),
      build: () => Promise.reject(Object.assign(new Error("clouseau is down"), { transient: true })),
      progress: () => Promise.reject(new Error("no progress either")),
      cleanup: () => Promise.resolve(),
    };
    const hanging: IndexBackend = { ...broken, type: "hanging", field: "st_indexes", indexesOf: (_db, ddocs) => ({ indexes: ddocs.filter((d) => (d.body as Record<string, unknown>)["st_indexes"] !== undefined).map((d) => ({ type: "hanging", key: d.id, ddocs: [d.id], name: d.id, field: "st_indexes", entry: "g" })), problems: [] }), build: () => new Promise(() => undefined) };
    const r = await start({ backends: [broken, hanging], ini: { ken: { build_timeout_msec: "2000", retry_initial_msec: "100" } } });
    r.store.createDb("shaky");
    writeDocs(r.store, "shaky", 100);
    r.store.putDesignDoc("shaky", "both", { ...VIEWS, indexes: { t: { index: "function (doc) {}" } }, st_indexes: { g: { index: "function (doc) {}" } } });
    await until(r, async () => (await lagOf(r, "shaky")) === 0, "the views built");
    await until(r, () => r.indexing.daemon.metrics().buildsFailed >= 3, "the broken builds failed (and were retried)");
    expect(r.logger.text()).toContain("clouseau is down");
    await until(r, () => r.logger.text().includes("no progress for 2000 ms"), "the hanging build timed out");
    // The views go on: fresh again (on a busy machine a views build, real work in the sandbox's worker,
    // can itself outlast 2000 virtual ms and be retried; waited for, not expected at once).
    await until(r, () => r.indexing.daemon.status().indexes.find((i) => i.type === "views")?.state === "fresh", "the views fresh beside the failing backends");
  });

  it("a store outage fails inspections as transient: retried until the store is back, never dropped", async () => {
    const r = await start({ ini: { ken: { retry_initial_msec: "100", retry_max_msec: "400", retry_max_attempts: "0" } } });
    r.store.createDb("outage");
    r.store.putDesignDoc("outage", "app", VIEWS);
    writeDocs(r.store, "outage", 100);
    r.store.setAvailable(false);
    await until(r, () => r.indexing.daemon.metrics().inspectFailures >= 5, "several failed inspections");
    r.store.setAvailable(true);
    await until(r, async () => (await lagOf(r, "outage")) === 0, "built once the store is back");
    expect(r.logger.text()).toContain("ken: db inspection failed; retrying");
  });

  it("queries are noted: a queried index shows as such, and goes first", async () => {
    const r = await start();
    const tap = tapViewQueries(r.store);
    tap.connect((db, ddoc) => r.indexing.daemon.noteQuery(db, ddoc));
    r.store.createDb("q");
    r.store.putDesignDoc("q", "app", VIEWS);
    writeDocs(r.store, "q", 20);
    await until(r, async () => (await lagOf(r, "q")) === 0, "built");
    await tap.views.queryView("q", "_design/app", "all", { ...DEFAULT_VIEW_QUERY, update: "false" });
    expect(r.indexing.daemon.status().indexes[0]).toMatchObject({ priority: "queried" });
    r.indexing.daemon.prioritize("q", "app");
    expect(r.indexing.daemon.status().indexes[0]).toMatchObject({ priority: "hint" });
  });
});
