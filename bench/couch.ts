/**
 * `npm run bench:couch` (tsx bench/couch.ts): upholster against PouchDB Server
 * started locally (and the CouchDB named by COUCHDB_URL when set), default
 * adapter settings vs tuned (`poll_interval_ms` 10 000 vs 1 000), in the same run:
 *   - requests per db update: adapter requests (status().requests) while N
 *     single-doc writes spread over dbs are made and processed by the daemon;
 *   - time from a db qualifying to its compaction starting: rounds of updates
 *     until `sizes.file / sizes.active > 2` (checked by a separate client after
 *     each round; the round that made it qualify is timestamped) until the
 *     daemon's `startJob` for that db.
 */
import { createCouchStore } from "../src/adapters/couchdb-http/index.js";
import type { CompactionObject, Store } from "../src/ports/store.js";
import { createUpholster } from "../src/runtime/upholster.js";
import { startPouchDbServer } from "../test/support/pouchdb-server.js";
import { createMemoryStatePort } from "../src/adapters/state/index.js";

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const config = {
  smoosh: { wait_secs: "1", staleness: "0", rescan_interval: "0" },
  "smoosh.ratio_dbs": { min_size: "20000" },
  upholster: { log_level: "silent" },
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Settings {
  readonly label: string;
  readonly pollIntervalMs: number;
}

async function measure(url: string, settings: Settings, tag: string): Promise<{ perUpdate: number; qualifyToStartMs: number }> {
  const handle = createCouchStore({ url, logger: silent, state: createMemoryStatePort(), pollIntervalMs: settings.pollIntervalMs });
  const client = createCouchStore({ url, logger: silent, state: createMemoryStatePort() });
  const starts = new Map<string, number>();
  // Delegate with `this` = the adapter (a prototype-chain wrapper would shadow its state).
  const inner = handle.store;
  const store: Store = {
    listDbs: () => inner.listDbs(),
    dbInfo: (db) => inner.dbInfo(db),
    dbInfos: (dbs) => (inner.dbInfos === undefined ? Promise.reject(new Error("no dbInfos")) : inner.dbInfos(dbs)),
    designDocs: (db) => inner.designDocs(db),
    viewIndexInfo: (db, ddoc) => inner.viewIndexInfo(db, ddoc),
    startJob: (object: CompactionObject) => {
      if (!starts.has(object.db)) starts.set(object.db, performance.now());
      return inner.startJob(object);
    },
    attachJob: (object) => inner.attachJob(object),
    ensureDb: (db) => inner.ensureDb(db),
    getDoc: (db, id) => inner.getDoc(db, id),
    bulkDocs: (db, docs) => inner.bulkDocs(db, docs),
    changes: (db, query) => inner.changes(db, query),
    currentSeq: (db) => inner.currentSeq(db),
    jobLookIntervalMs: inner.jobLookIntervalMs,
  };
  const upholster = createUpholster({ store, events: handle.events, config, logger: silent });
  await upholster.start();
  await sleep(1_500);

  // Requests per db update: N writes over 10 dbs, then wait two poll intervals for them to be processed.
  const dbs = Array.from({ length: 10 }, (_, i) => `bench_${tag}_${i}`);
  for (const db of dbs) await client.store.ensureDb(db);
  await sleep(settings.pollIntervalMs * 2);
  const n = 200;
  const before = handle.status().requests;
  for (let i = 0; i < n; i++) {
    await client.store.bulkDocs(dbs[i % dbs.length] ?? "x", [{ _id: `doc${i}` }]);
    await sleep(25);
  }
  await sleep(settings.pollIntervalMs * 2 + 500);
  await upholster.smoosh.whenIdle();
  const perUpdate = (handle.status().requests - before) / n;

  // Qualify -> start.
  const db = `bench_${tag}_grow`;
  await client.store.ensureDb(db);
  let revs = new Map<string, string>();
  for (const r of await client.store.bulkDocs(db, Array.from({ length: 500 }, (_, i) => ({ _id: `d${i}`, body: "x".repeat(400) })))) if (r.ok) revs.set(r.id, r.rev);
  let qualifiedAt: number | undefined;
  while (qualifiedAt === undefined) {
    const res = await client.store.bulkDocs(db, [...revs].map(([id, rev]) => ({ _id: id, _rev: rev, body: "x".repeat(400) })));
    const wroteAt = performance.now();
    revs = new Map(res.flatMap((r) => (r.ok ? [[r.id, r.rev] as [string, string]] : [])));
    const info = await client.store.dbInfo(db);
    if (info !== undefined && info.fileBytes > 20_000 && info.fileBytes / info.activeBytes > 2) qualifiedAt = wroteAt;
  }
  const deadline = performance.now() + 120_000;
  while (!starts.has(db) && performance.now() < deadline) await sleep(10);
  const qualifyToStartMs = (starts.get(db) ?? Number.NaN) - qualifiedAt;
  await upholster.stop();
  await handle.close();
  await client.close();
  return { perUpdate, qualifyToStartMs };
}

async function benchServer(name: string, url: string): Promise<void> {
  const defaults = await measure(url, { label: "default (poll 10 s)", pollIntervalMs: 10_000 }, `${name}_d_${Date.now()}`);
  const tuned = await measure(url, { label: "tuned (poll 1 s)", pollIntervalMs: 1_000 }, `${name}_t_${Date.now()}`);
  console.log(`${name}: requests per db update: default ${defaults.perUpdate.toFixed(2)}, tuned ${tuned.perUpdate.toFixed(2)} (tuned/default ${(tuned.perUpdate / defaults.perUpdate).toFixed(2)}x)`);
  console.log(`${name}: qualify -> compaction start: default ${defaults.qualifyToStartMs.toFixed(0)} ms, tuned ${tuned.qualifyToStartMs.toFixed(0)} ms (default/tuned ${(defaults.qualifyToStartMs / tuned.qualifyToStartMs).toFixed(1)}x)`);
}

const pouch = await startPouchDbServer();
try {
  await benchServer("pouchdb-server", pouch.url);
} finally {
  await pouch.stop();
}
const couch = process.env.COUCHDB_URL;
if (couch !== undefined && couch !== "") await benchServer("couchdb", couch);
else console.log("couchdb: skipped (COUCHDB_URL not set)");
