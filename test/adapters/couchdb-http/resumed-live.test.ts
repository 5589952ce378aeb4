/**
 * Against a real CouchDB (COUCHDB_URL, loopback only), through a TCP proxy
 * that can be cut: a reconnect of the `_db_updates` feed is announced with
 * `source-resumed` (CouchDB's own feed may have lost what its global_changes
 * buffered), the first connection is not. Skipped without COUCHDB_URL.
 */
import { describe, expect, it } from "vitest";
import { createCouchStore } from "../../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import type { StoreEvent } from "../../../src/ports/events.js";
import { TcpProxy } from "../../support/tcp-proxy.js";
import { waitFor } from "../../support/wait-for.js";
import { liveCouchUrl } from "../../support/live-couch.js";


describe.skipIf(liveCouchUrl === undefined)("CouchDB event source, live: reconnects are announced", () => {
  it("source-resumed after the feed's connection broke and came back, not at the first connection", async () => {
    const target = new URL(liveCouchUrl ?? "");
    const proxy = new TcpProxy(Number(target.port || 5984), target.hostname);
    const port = await proxy.start();
    const viaProxy = new URL(target.toString());
    viaProxy.port = String(port);
    const handle = createCouchStore({ url: viaProxy.toString(), logger: createRecordingLogger(), state: createMemoryStatePort(), heartbeatMs: 500, requestTimeoutMs: 2_000, retry: { retries: 0 } });
    const events: StoreEvent[] = [];
    try {
      await handle.events.start((e) => events.push(e));
      await waitFor(() => handle.events.status().connected, "the feed to connect");
      expect(events.filter((e) => e.type === "source-resumed")).toEqual([]);
      proxy.cut();
      await waitFor(() => !handle.events.status().connected, "the break to be seen");
      proxy.restore();
      await waitFor(() => events.some((e) => e.type === "source-resumed"), "source-resumed after the reconnect");
      expect(handle.events.status()).toMatchObject({ mode: "db_updates", connected: true });
    } finally {
      await handle.close();
      await proxy.stop();
    }
  });
});
