import { describe, expect, it } from "vitest";
import { connect } from "node:net";
import { ADMIN_AUTH, rawGet, rawStream, silentLogger, startHarness, waitFor } from "./helpers.js";
import type { Logger } from "../../src/ports/shell.js";

describe("slow and vanished clients", () => {
  it("a client that stops reading is disconnected and does not stall the others", async () => {
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (_f, msg) => void warnings.push(msg) };
    const h = await startHarness({
      logger,
      ini: { global_changes: { max_event_delay: "5", max_write_delay: "5", client_drain_timeout_ms: "300", max_client_buffer_bytes: "65536" } },
    });
    try {
      // ~8 MB of feed: more than the loopback socket buffers hold.
      const dbs = 40_000;
      for (let i = 0; i < dbs; i++) h.store.createDb(`${"x".repeat(150)}${i}`);
      await waitFor(() => h.subsystem.metrics().db_writes >= dbs, "the feed to be written", 60_000);

      const url = new URL(h.url);
      const slow = connect(Number(url.port), url.hostname);
      slow.pause(); // never reads
      slow.write(`GET /_db_updates?feed=continuous&since=0&heartbeat=60000 HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN_AUTH}\r\n\r\n`);

      const fast = rawStream(`${h.url}/_db_updates?feed=continuous&since=now&heartbeat=60000`, { authorization: ADMIN_AUTH });
      await waitFor(() => fast.headersReceived || h.subsystem.metrics().subscribers >= 1, "the fast client to wait");
      h.store.createDb("fresh");
      await waitFor(() => fast.body.includes('"db_name":"fresh"'), "the fresh event at the fast client");
      await waitFor(() => warnings.includes("db updates: disconnecting a slow client"), "the slow client to be disconnected");
      expect((await rawGet(`${h.url}/_db_updates?limit=1`, { authorization: ADMIN_AUTH })).status).toBe(200);
      fast.abort();
      slow.destroy();
    } finally {
      await h.close();
    }
  });
});
