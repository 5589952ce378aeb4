/**
 * An IndexingHarness over HTTP (PouchDB Server, a real CouchDB): upholster
 * as `upholster run --couch URL` builds it (the CouchDB store adapter, its
 * event source, the index backends over HTTP), on real time.
 */
import { createCouchStore } from "../../src/adapters/couchdb-http/index.js";
import { createCouchIndexBackends } from "../../src/adapters/couchdb-http/indexing/index.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../src/adapters/state/index.js";
import { createUpholster } from "../../src/runtime/upholster.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { fastAdapterOptions } from "./http-daemon-harness.js";
import { indexingContractConfig, type IndexingHarness } from "./indexing-contract.js";

/** fetch() refuses URLs with credentials: they go in a header. */
export const plainUrlAndAuth = (url: string): { base: string; headers: Record<string, string> } => {
  const parsed = new URL(url);
  const headers: Record<string, string> = { Accept: "application/json", "Content-Type": "application/json" };
  if (parsed.username !== "") headers.Authorization = `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString("base64")}`;
  parsed.username = "";
  parsed.password = "";
  return { base: parsed.toString().replace(/\/+$/, ""), headers };
};

export async function httpIndexingHarness(url: string, options: { readonly staleParam: "update=false" | "stale=ok"; readonly onClose?: () => Promise<void> }): Promise<IndexingHarness> {
  const logger = createRecordingLogger();
  const scheduler = realScheduler({ unref: true });
  const couch = createCouchStore({ url, logger, state: createMemoryStatePort(), scheduler, ...fastAdapterOptions, ddocChecks: { minIntervalMs: 200, maxIntervalMs: 2_000 } });
  const indexBackends = createCouchIndexBackends({ url, logger, scheduler, poll: { minMs: 50, maxMs: 500 } });
  const upholster = createUpholster({ store: couch.store, events: couch.events, scheduler, logger, config: indexingContractConfig, indexing: { backends: indexBackends.backends } });
  await upholster.start();
  const { base, headers } = plainUrlAndAuth(url);
  return {
    store: couch.store,
    upholster,
    async rowsWithoutUpdate(db, ddoc, view) {
      const res = await fetch(`${base}/${encodeURIComponent(db)}/${ddoc}/_view/${view}?${options.staleParam}&reduce=false&limit=0`, { headers });
      const body = (await res.json()) as { total_rows?: number };
      return body.total_rows ?? -1;
    },
    async deleteDb(db) {
      await fetch(`${base}/${encodeURIComponent(db)}`, { method: "DELETE", headers });
    },
    async close() {
      await upholster.stop();
      await couch.close();
      await indexBackends.close();
      await options.onClose?.();
    },
  };
}
