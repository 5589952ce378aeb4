/**
 * `npm run bench:db-updates`
 *
 * 1. Events per second through the pure core (listener + writer state machines).
 * 2. End-to-end latency from a db write (memory store) to the event reaching
 *    100 continuous `/_db_updates` subscribers over loopback HTTP (p50, p99),
 *    with CouchDB's timing defaults (25 ms / 500 ms) and with upholster's.
 * 3. With COUCHDB_URL (e.g. http://admin:pw@127.0.0.1:5984), CouchDB's own
 *    `/_db_updates` measured the same way in the same run, as the baseline.
 *
 * Env: BENCH_WRITES (writes per configuration, default 20), BENCH_SUBSCRIBERS (100).
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { performance } from "node:perf_hooks";
import { createMemoryStore } from "../src/adapters/memory/index.js";
import { realScheduler } from "../src/runtime/scheduler.js";
import { dbUpdatesSubsystem } from "../src/runtime/db-updates/index.js";
import { createLocalAuthenticator } from "../src/http/auth/index.js";
import {
  COUCHDB_DEFAULTS,
  UPHOLSTER_DEFAULTS,
  initialListenerState,
  initialWriterState,
  listenerStep,
  writerStep,
  type DbUpdatesConfig,
  type ListenerState,
  type WriterState,
} from "../src/core/db-updates/index.js";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../src/ports/shell.js";
import { quantile } from "./quantile.js";

const WRITES = Number(process.env.BENCH_WRITES ?? 20);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 100);
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

// --- 1. the core -------------------------------------------------------------

function coreEventsPerSecond(events: number, distinctDbs: number): number {
  let listener: ListenerState = initialListenerState({ updateDb: true, maxEventDelayMs: 25, maxPendingKeys: 100_000, feedDbName: "feed" });
  let writer: WriterState = initialWriterState({
    updateDb: true,
    maxWriteDelayMs: 500,
    maxPendingKeys: 100_000,
    maxWriteBatch: 1_000,
    retryInitialDelayMs: 100,
    retryMaxDelayMs: 5_000,
  });
  let listenerWake: number | undefined;
  let writerWake: number | undefined;
  let written = 0;
  const types = ["created", "updated", "deleted"] as const;
  const feedWriter = (keys: readonly string[], nowMs: number) => {
    let out = writerStep(writer, { type: "keys", keys }, nowMs);
    writer = out.state;
    writerWake = out.wakeAtMs;
    while (out.write !== undefined) {
      written += out.write.length;
      out = writerStep(writer, { type: "write-finished", failed: [] }, nowMs);
      writer = out.state;
      writerWake = out.wakeAtMs;
    }
  };
  const start = performance.now();
  for (let i = 0; i < events; i++) {
    const nowMs = Math.floor(i / 100); // 100 events per virtual ms: 100k events/s of virtual load
    if (listenerWake !== undefined && listenerWake <= nowMs) {
      const out = listenerStep(listener, { type: "tick" }, nowMs);
      listener = out.state;
      listenerWake = out.wakeAtMs;
      if (out.released.length > 0) feedWriter(out.released, nowMs);
    }
    if (writerWake !== undefined && writerWake <= nowMs) feedWriter([], nowMs);
    const out = listenerStep(listener, { type: "db-event", key: { type: types[i % 3]!, db: `db${(i * 7919) % distinctDbs}` } }, nowMs);
    listener = out.state;
    listenerWake = out.wakeAtMs;
    if (out.released.length > 0) feedWriter(out.released, nowMs);
  }
  const seconds = (performance.now() - start) / 1000;
  if (written === 0) throw new Error("the core wrote nothing");
  return events / seconds;
}

// --- 2/3. end to end ------------------------------------------------------------

interface Subscriber {
  readonly arrivals: Map<string, number>;
  close(): void;
}

/** A raw continuous subscriber; resolves once the response headers arrived or `readyAfterMs` passed (CouchDB delays headers). */
function subscribe(url: string, authorization: string | undefined): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const arrivals = new Map<string, number>();
    let buffer = "";
    const req = httpRequest(url, { headers: authorization ? { authorization } : {}, agent: false }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) reject(new Error(`subscribe: HTTP ${res.statusCode}`));
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const now = performance.now();
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line.startsWith("{")) {
            const row = JSON.parse(line) as { db_name?: string; type?: string };
            if (row.type === "created" && row.db_name !== undefined && !arrivals.has(row.db_name)) arrivals.set(row.db_name, now);
          }
        }
      });
      res.on("error", () => undefined);
    });
    req.on("error", () => undefined);
    req.end();
    // Subscribed once the request is on the wire and the server had time to register it.
    setTimeout(() => resolve({ arrivals, close: () => req.destroy() }), 300);
  });
}

interface LatencyResult {
  readonly label: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly samples: number;
  readonly missing: number;
}

async function measure(
  label: string,
  feedUrl: string,
  authorization: string | undefined,
  createDb: (name: string) => Promise<void>,
  cleanup: (name: string) => Promise<void>,
): Promise<LatencyResult> {
  const subs = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => subscribe(feedUrl, authorization)));
  const writtenAt = new Map<string, number>();
  const tag = `bench_${label.replace(/[^a-z0-9]/gi, "").toLowerCase()}_${Date.now()}`;
  for (let i = 0; i < WRITES; i++) {
    const name = `${tag}_${i}`;
    writtenAt.set(name, performance.now());
    await createDb(name);
    // Wait until every subscriber has it (or 3 s), then a random gap so writes do not phase-lock with the batch windows.
    const deadline = performance.now() + 3_000;
    while (subs.some((s) => !s.arrivals.has(name)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
  }
  const latencies: number[] = [];
  let missing = 0;
  for (const [name, t0] of writtenAt) {
    for (const s of subs) {
      const t = s.arrivals.get(name);
      if (t === undefined) missing++;
      else latencies.push(t - t0);
    }
  }
  for (const s of subs) s.close();
  for (const name of writtenAt.keys()) await cleanup(name);
  latencies.sort((a, b) => a - b);
  return { label, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), samples: latencies.length, missing };
}

async function measureUpholster(label: string, defaults: DbUpdatesConfig): Promise<LatencyResult> {
  const scheduler = realScheduler({ unref: true });
  const store = createMemoryStore({ scheduler, autoIndexDelayMs: false });
  const ini = { admins: { bench: "bench" }, chttpd_auth: { iterations: "1000" } };
  const authenticator = await createLocalAuthenticator({ config: ini, clock: scheduler });
  const subsystem = dbUpdatesSubsystem({ store, scheduler, config: ini, logger: silent, authenticator, defaults });
  const source = store.createEventSource();
  await source.start((e) => subsystem.service.handleStoreEvent(e));
  await subsystem.start();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    void (async () => {
      for (const route of subsystem.routes) if (await route(req, res, url)) return;
      res.writeHead(404).end();
    })();
  });
  server.maxConnections = SUBSCRIBERS + 50;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const auth = `Basic ${Buffer.from("bench:bench").toString("base64")}`;
  try {
    return await measure(
      label,
      `http://127.0.0.1:${port}/_db_updates?feed=continuous&since=now&heartbeat=10000`,
      auth,
      async (name) => void store.createDb(name),
      async (name) => void store.deleteDb(name),
    );
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await source.stop();
    await subsystem.stop();
  }
}

async function measureCouchDb(couchUrl: string): Promise<LatencyResult> {
  const url = new URL(couchUrl);
  const auth = url.username ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}` : undefined;
  url.username = "";
  url.password = "";
  const base = url.toString().replace(/\/$/, "");
  const call = async (method: string, path: string) => {
    const res = await fetch(`${base}${path}`, { method, headers: auth ? { authorization: auth } : {} });
    await res.text();
    if (res.status >= 400 && !(method === "DELETE" && res.status === 404)) throw new Error(`${method} ${path}: HTTP ${res.status}`);
  };
  return measure(
    "CouchDB's own /_db_updates",
    `${base}/_db_updates?feed=continuous&since=now&heartbeat=10000`,
    auth,
    (name) => call("PUT", `/${name}`),
    (name) => call("DELETE", `/${name}`),
  );
}

const fmt = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : "n/a");

async function main(): Promise<void> {
  console.log(`db updates bench: ${WRITES} db creations per configuration, ${SUBSCRIBERS} continuous subscribers each\n`);
  coreEventsPerSecond(200_000, 5_000); // warm-up
  const eps = coreEventsPerSecond(2_000_000, 10_000);
  console.log(`core (listener + writer, 2M events over 30k keys): ${Math.round(eps).toLocaleString("en")} events/s`);

  const results: LatencyResult[] = [];
  results.push(await measureUpholster("upholster, CouchDB defaults (25/500 ms)", COUCHDB_DEFAULTS));
  results.push(await measureUpholster(`upholster, upholster defaults (${UPHOLSTER_DEFAULTS.maxEventDelayMs}/${UPHOLSTER_DEFAULTS.maxWriteDelayMs} ms)`, UPHOLSTER_DEFAULTS));
  const couchUrl = process.env.COUCHDB_URL;
  if (couchUrl) results.push(await measureCouchDb(couchUrl));

  console.log("\nwrite -> event at each subscriber (loopback HTTP):");
  for (const r of results) {
    console.log(`  ${r.label.padEnd(46)} p50 ${fmt(r.p50Ms).padStart(7)} ms   p99 ${fmt(r.p99Ms).padStart(7)} ms   (${r.samples} samples, ${r.missing} missing)`);
  }
  const ours = results[1]!;
  const compat = results[0]!;
  console.log(`\nratio p50, upholster defaults vs CouchDB defaults on the same feed: ${fmt(compat.p50Ms / ours.p50Ms)}x faster`);
  const couch = results[2];
  if (couch) console.log(`ratio p50, upholster defaults vs CouchDB's own feed (baseline, same run): ${fmt(couch.p50Ms / ours.p50Ms)}x faster`);
  else console.log("(set COUCHDB_URL=http://admin:pw@host:5984 to measure CouchDB's own /_db_updates as the baseline)");
}

void main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
