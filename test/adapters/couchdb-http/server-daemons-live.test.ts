/**
 * CouchDB's own smoosh and ken, read from the real server of COUCHDB_URL:
 * what the adapter reports must be what the server's config sections say,
 * asked directly. Read only: the suites run side by side, and switching a
 * daemon on or off would change what the others see (loopback tests of both
 * states are in server-daemons.test.ts).
 */
import { describe, expect, it } from "vitest";
import { createCouchStore } from "../../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import { couchRequest, liveCouchUrl } from "../../support/live-couch.js";

type Section = Record<string, string>;

describe.skipIf(liveCouchUrl === undefined)("CouchDB's own daemons, on a real CouchDB (COUCHDB_URL)", () => {
  it("the report matches the server's config: each built-in smoosh channel's concurrency, ken's channels, the _dbs_info limit", async () => {
    const { all_nodes: nodes } = (await couchRequest("GET", "/_membership")) as { all_nodes: string[] };
    const section = async (node: string, name: string) => (await couchRequest("GET", `/_node/${encodeURIComponent(node)}/_config/${name}`)) as Section;
    const logger = createRecordingLogger();
    const handle = createCouchStore({ url: liveCouchUrl ?? "", logger, state: createMemoryStatePort() });
    try {
      await handle.store.probe();
      await handle.store.serverDaemons.check(handle.status().capabilities.vendor);
      const status = handle.store.serverDaemons.status();
      expect(status.state).toBe("known");
      expect(status.nodes).toBe(nodes.length);

      const running: string[] = [];
      let kenOn = false;
      let limit = Infinity;
      for (const node of nodes) {
        for (const channel of ["index_cleanup", "ratio_dbs", "ratio_views", "slack_dbs", "slack_views", "upgrade_dbs", "upgrade_views"]) {
          if (Number((await section(node, `smoosh.${channel}`))["concurrency"] ?? "1") > 0) running.push(`${node}: ${channel}`);
        }
        const ken = await section(node, "ken");
        kenOn ||= Number(ken["batch_channels"] ?? "20") + Number(ken["incremental_channels"] ?? "80") > 0;
        limit = Math.min(limit, Number((await section(node, "chttpd"))["max_db_number_for_dbs_info_req"] ?? "100"));
      }
      expect(status.smooshChannels).toEqual(expect.arrayContaining(running));
      expect(status.smoosh).toBe(running.length > 0 ? "on" : "off");
      expect(status.ken).toBe(kenOn ? "on" : "off");
      expect(handle.status().dbsInfoKeysPerRequest).toBe(Math.min(100, limit));
      // Warned exactly for what runs.
      const warned = logger.lines.filter((l) => l.level === "warn").map((l) => l.msg);
      expect(warned.filter((m) => m.startsWith("CouchDB's own smoosh runs"))).toHaveLength(new Set(running.map((r) => r.split(": ")[0])).size);
      expect(warned.some((m) => m.startsWith("CouchDB's own ken runs"))).toBe(kenOn);
    } finally {
      await handle.close();
    }
  });
});
