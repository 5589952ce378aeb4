/**
 * `upholster status` says whether CouchDB's own smoosh and ken run beside
 * upholster (src/cli/server-daemons-status.ts), from the `couchdb` entry of
 * `/_upholster/status`: rendered from bodies, and fetched over loopback HTTP
 * from a server that answers both status endpoints.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fetchStatusText } from "../../src/cli/status.js";
import { renderServerDaemons } from "../../src/cli/server-daemons-status.js";
import { ReplayServer } from "../support/replay-server.js";

const withDaemons = (serverDaemons: unknown) => ({ subsystems: { couchdb: { server: "http://127.0.0.1:5984/", serverDaemons } } });

describe("the CouchDB daemons line of upholster status", () => {
  it("names what runs and how to switch it off; says off, not read yet, or unknown with why; nothing where there is no CouchDB", () => {
    const on = renderServerDaemons(withDaemons({ state: "known", smoosh: "on", ken: "on", smooshChannels: ["couchdb@127.0.0.1: ratio_dbs", "couchdb@127.0.0.1: slack_dbs"] }));
    expect(on?.split("\n")).toEqual([
      "CouchDB's own smoosh runs beside upholster's compaction (couchdb@127.0.0.1: ratio_dbs, couchdb@127.0.0.1: slack_dbs): set each channel's concurrency = 0 in CouchDB (docs/couchdb.md)",
      "CouchDB's own ken runs beside upholster's indexing: set [ken] batch_channels = 0 and incremental_channels = 0 in CouchDB",
    ]);
    expect(renderServerDaemons(withDaemons({ state: "known", smoosh: "off", ken: "on" }))?.split("\n")).toHaveLength(1);
    expect(renderServerDaemons(withDaemons({ state: "known", smoosh: "off", ken: "off", smooshChannels: [] }))).toBe("CouchDB's own smoosh and ken: off");
    expect(renderServerDaemons(withDaemons({ state: "pending" }))).toBe("CouchDB's own smoosh and ken: not read yet");
    expect(renderServerDaemons(withDaemons({ state: "unknown", reason: "GET /_membership: HTTP 401 unauthorized" }))).toBe(
      "CouchDB's own smoosh and ken: unknown (GET /_membership: HTTP 401 unauthorized)",
    );
    expect(renderServerDaemons(withDaemons({ state: "not-couchdb" }))).toBeUndefined();
    expect(renderServerDaemons({ subsystems: {} })).toBeUndefined();
    expect(renderServerDaemons(undefined)).toBeUndefined();
    expect(renderServerDaemons(withDaemons({ smoosh: 3 }))).toBeUndefined();
  });

  let server: ReplayServer | undefined;
  afterEach(async () => server?.stop());

  it("upholster status prints it after the channels", async () => {
    server = new ReplayServer()
      .route("GET", "/_node/_local/_smoosh/status", { status: 200, body: { channels: { ratio_dbs: { active: 1, starting: 0, waiting: { size: 2, min: 2.5, max: 4 } } } } })
      .route("GET", "/_upholster/status", { status: 200, body: withDaemons({ state: "known", smoosh: "on", ken: "off", smooshChannels: ["couchdb@127.0.0.1: ratio_dbs"] }) });
    const text = await fetchStatusText({ url: await server.start() });
    const [table = "", daemons = ""] = text.split("\n\n");
    expect(table).toMatch(/^channel\s+active/);
    expect(daemons).toBe("CouchDB's own smoosh runs beside upholster's compaction (couchdb@127.0.0.1: ratio_dbs): set each channel's concurrency = 0 in CouchDB (docs/couchdb.md)");
  });
});
