/**
 * Fuzzing the HTTP surface (issue #7, section 5): at least 10,000 random and
 * malformed requests per daemon, from real clients over loopback (undici for
 * what a client would send, raw sockets for what none would), with bounded
 * concurrency, to the daemon over the in-memory store and over the CouchDB
 * adapter in front of a replayed CouchDB 3.4.3. Whatever is sent: no 5xx,
 * CouchDB's body on every 4xx, no crash, no unhandled rejection, nothing
 * logged as a handler failure, every server socket closed afterwards, the
 * heap back where it was, and the daemon still answering.
 *
 * Seeded like the property tests (test/setup.ts): `FC_SEED=<seed>` replays a
 * run, `FUZZ_ONLY=<index>,...` replays single exchanges from a failure
 * message, `FUZZ_REQUESTS=<n>` changes the count.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "undici";
import { waitFor } from "../support/wait-for.js";
import { startMemoryDaemon, startReplayedCouchDaemon, type FuzzDaemon } from "./fuzz/daemons.js";
import { describeExchange } from "./fuzz/exchanges.js";
import { exchangeAt, fuzzExchange, indicesToSend, runSeed } from "./fuzz/generate.js";
import { heapUsedAfterGc } from "./fuzz/heap.js";
import { watchProcess } from "./fuzz/process-watch.js";
import { runFuzz, type Finding, type Target } from "./fuzz/run-fuzz.js";
import { countServerSockets } from "./fuzz/server-sockets.js";

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
/** Most exchanges spend their time waiting (cuts, dribbles, quiet periods), so many more than the two cores are in flight. */
const CONCURRENCY = 32;
/** "Memory flat": a run leaves at most this much more heap in use than it found (caches are bounded well below it). */
const HEAP_GROWTH_LIMIT_BYTES = 50 * 1024 * 1024;
const MIB = 1024 * 1024;

const basic = (daemon: FuzzDaemon): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${daemon.admin.name}:${daemon.admin.password}`).toString("base64")}`,
});

/** The findings, the first few of each kind, each with what replays it. */
function report(findings: readonly Finding[], seed: number): string {
  const byKind = new Map<string, Finding[]>();
  for (const f of findings) {
    const kind = `${f.exchange.kind === "raw" ? f.exchange.label : "client"}: ${f.problem.slice(0, 60)}`;
    byKind.set(kind, [...(byKind.get(kind) ?? []), f]);
  }
  const shown = [...byKind.values()].flatMap((group) =>
    group.slice(0, 3).map((f) => `#${f.index} ${f.problem}\n  replay: FC_SEED=${seed} FUZZ_ONLY=${f.index}\n  sent: ${describeExchange(f.exchange)}`),
  );
  return `${findings.length} of the fuzzer's exchanges went wrong (seed ${seed}):\n${shown.join("\n")}`;
}

/** After the run: an ordinary admin request still gets the ordinary answer. */
async function stillServes(daemon: FuzzDaemon): Promise<void> {
  const status = await fetch(`${daemon.url}/_smoosh/status`, { headers: basic(daemon) });
  expect(status.status).toBe(200);
  expect(Object.keys(((await status.json()) as { channels: object }).channels)).toContain("ratio_dbs");
  const up = await fetch(`${daemon.url}/_up`);
  expect(await up.json()).toEqual({ status: "ok" });
}

describe.each([
  { label: "the in-memory store", start: startMemoryDaemon },
  { label: "the CouchDB adapter and a replayed CouchDB 3.4.3", start: startReplayedCouchDaemon },
])("fuzzing the HTTP API over $label", ({ start }) => {
  it(`${REQUESTS} random and malformed requests: no 5xx, CouchDB's 4xx bodies, no crash or rejection, sockets closed, heap flat`, async () => {
    const daemon = await start();
    const seed = runSeed();
    const arbitrary = fuzzExchange(daemon.admin);
    const sockets = countServerSockets(daemon.port);
    const watch = watchProcess();
    const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 1_000 });
    const target: Target = { url: daemon.url, port: daemon.port, agent };
    try {
      const heapBeforeBytes = await heapUsedAfterGc();
      const startedMs = Date.now();
      const indices = indicesToSend(REQUESTS, process.env.FUZZ_ONLY);
      const { findings, statuses } = await runFuzz(target, indices, (i) => exchangeAt(arbitrary, seed, i), CONCURRENCY);
      const tookMs = Date.now() - startedMs;
      await agent.close();
      await waitFor(() => sockets.open() === 0, "every server socket to close");
      daemon.forgetHistory();
      const heapAfterBytes = await heapUsedAfterGc();
      console.info(
        `fuzz ${daemon.label}: ${indices.length} exchanges, concurrency ${CONCURRENCY}, ${tookMs} ms, ${sockets.accepted()} connections, ` +
          `heap ${(heapBeforeBytes / MIB).toFixed(1)} -> ${(heapAfterBytes / MIB).toFixed(1)} MiB, seed ${seed}; ` +
          `statuses ${[...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}x${n}`).join(" ")}`,
      );
      if (findings.length > 0) expect.fail(report(findings, seed));
      expect(watch.incidents).toEqual([]);
      expect(daemon.errorsLogged).toEqual([]);
      expect(heapAfterBytes - heapBeforeBytes).toBeLessThan(HEAP_GROWTH_LIMIT_BYTES);
      await stillServes(daemon);
    } finally {
      watch.stop();
      sockets.stop();
      await agent.destroy();
      await daemon.stop();
    }
  }, 600_000);
});
