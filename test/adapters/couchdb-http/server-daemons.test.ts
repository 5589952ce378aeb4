/**
 * CouchDB's own smoosh and ken, and its `_dbs_info` key limit, read from the
 * server's config (src/adapters/couchdb-http/server-daemons.ts and
 * server-daemons-watch.ts). The rules over a node's sections are pure and
 * property-tested; the reading runs over loopback HTTP against CouchDB
 * 3.4.3's recorded answers: `/_membership` (fixture 04), the stock `[smoosh]`
 * (07, only `state_dir`) and `[ken]` (08, `{}`: a section with nothing set).
 * An unset section answers `{}` there, so the channel sections and
 * `[chttpd]` are served as `{}` unless a test sets them.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { createCouchStore } from "../../../src/adapters/couchdb-http/index.js";
import { channelRuns, dbsInfoMaxKeysOf, kenRuns, nodeDaemonsOf, smooshChannelNames, type ConfigSection } from "../../../src/adapters/couchdb-http/server-daemons.js";
import { SERVER_DAEMONS_RECHECK_MS, SETTLE_MAX_WAIT_MS } from "../../../src/adapters/couchdb-http/server-daemons-watch.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import { VirtualScheduler } from "../../../src/runtime/scheduler.js";
import { exchange } from "../../support/fixtures.js";
import { ReplayServer } from "../../support/replay-server.js";
import { waitFor } from "../../support/wait-for.js";

const BUILT_IN = ["index_cleanup", "ratio_dbs", "ratio_views", "slack_dbs", "slack_views", "upgrade_dbs", "upgrade_views"];

describe("which of CouchDB's daemons run, from a node's config sections", () => {
  it("smoosh's channels are the built-in ones merged with the configured lists, sorted (CouchDB 3.3+: listing fewer switches none off)", () => {
    expect(smooshChannelNames({})).toEqual(BUILT_IN);
    expect(smooshChannelNames({ db_channels: "ratio_dbs" })).toEqual(BUILT_IN);
    expect(smooshChannelNames({ db_channels: "", view_channels: "  " })).toEqual(BUILT_IN);
    expect(smooshChannelNames({ db_channels: " big_dbs ,ratio_dbs", cleanup_channels: "night_cleanup" })).toEqual(["big_dbs", ...BUILT_IN, "night_cleanup"].sort());
  });

  it("a channel runs unless its concurrency is an integer of 0 or less; ken unless its channels add up to 0 or less; the _dbs_info limit defaults to 100", () => {
    expect(channelRuns("1")).toBe(true);
    expect(channelRuns("0")).toBe(false);
    expect(channelRuns("-1")).toBe(false);
    expect(channelRuns("+0")).toBe(false);
    expect(channelRuns("three")).toBe(true);
    expect(kenRuns({})).toBe(true);
    expect(kenRuns({ batch_channels: "0" })).toBe(true);
    expect(kenRuns({ batch_channels: "0", incremental_channels: "0" })).toBe(false);
    expect(kenRuns({ batch_channels: "0", incremental_channels: "x" })).toBe(true);
    expect(dbsInfoMaxKeysOf({})).toBe(100);
    expect(dbsInfoMaxKeysOf({ max_db_number_for_dbs_info_req: "7" })).toBe(7);
    expect(dbsInfoMaxKeysOf({ max_db_number_for_dbs_info_req: "lots" })).toBeUndefined();
  });

  it("property: a node's running channels are exactly those whose concurrency is unset, a positive integer or no integer at all", () => {
    const concurrency = fc.oneof(fc.constant(undefined), fc.integer({ min: -3, max: 5 }).map(String), fc.constantFrom("x", "1.5", " 1", ""));
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...BUILT_IN, "big_dbs"), concurrency), (byChannel) => {
        const channels = new Map<string, ConfigSection>(
          Object.entries(byChannel).map(([name, value]): [string, ConfigSection] => [name, value === undefined ? {} : { concurrency: value }]),
        );
        const node = nodeDaemonsOf("n@h", { smoosh: {}, ken: {}, chttpd: {}, channels });
        const expected = [...channels].filter(([, s]) => s["concurrency"] === undefined || !/^[+-]?[0-9]+$/.test(s["concurrency"]) || Number(s["concurrency"]) > 0);
        expect(node.smooshChannels.map((c) => c.channel)).toEqual(expected.map(([name]) => name));
        for (const c of node.smooshChannels) expect(c.concurrency).toBe(byChannel[c.channel] ?? "1");
      }),
    );
  });
});

describe("reading them from a server", () => {
  let server: ReplayServer;
  /** The node's config sections by name; any other answers `{}`. Stock: fixtures 07 and 08 (recorded at `_node/_local`; the adapter asks by the node's name). */
  let sections: Map<string, ConfigSection>;
  const NODE_CONFIG = "/_node/couchdb%40127.0.0.1/_config/";
  beforeEach(() => {
    server = new ReplayServer().use(exchange("04"));
    sections = new Map([
      ["smoosh", exchange("07").response.body as ConfigSection],
      ["ken", exchange("08").response.body as ConfigSection],
    ]);
    server.route("GET", (p) => p.startsWith(NODE_CONFIG), (req) => ({ status: 200, body: sections.get(decodeURIComponent(req.path.slice(NODE_CONFIG.length))) ?? {} }));
  });
  afterEach(async () => server.stop());

  const make = (options: { dbsInfoMaxKeys?: number } = {}) => {
    const logger = createRecordingLogger();
    const scheduler = new VirtualScheduler({ startMs: Date.UTC(2026, 10, 29) });
    return server.start().then((url) => {
      const handle = createCouchStore({ url, logger, scheduler, state: createMemoryStatePort(), retry: { retries: 0 }, ...options });
      return { handle, logger, scheduler, store: handle.store };
    });
  };

  it("a stock CouchDB 3.4.3: smoosh runs its seven channels and ken runs; each is warned about once, with the keys that switch it off", async () => {
    const { handle, logger, store } = await make();
    expect(store.serverDaemons.status()).toEqual({ state: "pending" });
    await store.serverDaemons.check("couchdb");
    expect(store.serverDaemons.status()).toMatchObject({
      state: "known",
      smoosh: "on",
      ken: "on",
      nodes: 1,
      smooshChannels: BUILT_IN.map((c) => `couchdb@127.0.0.1: ${c}`),
    });
    const warnings = logger.lines.filter((l) => l.level === "warn").map((l) => l.msg);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain("CouchDB's own smoosh runs on couchdb@127.0.0.1 (channels index_cleanup concurrency 1, ratio_dbs concurrency 1");
    expect(warnings[0]).toContain("[smoosh.<channel>]");
    expect(warnings[1]).toContain("[ken] batch_channels = 0 and incremental_channels = 0");
    // Asked again, the same answer: nothing new to say. Sections only: never the whole config (it holds password hashes).
    await store.serverDaemons.check("couchdb");
    expect(logger.lines.filter((l) => l.level === "warn")).toHaveLength(2);
    expect(server.requests.filter((r) => /\/_config\/?$/.test(r.path))).toEqual([]);
    expect(server.count("GET", /\/_config\/smoosh\.ratio_dbs$/)).toBe(2);
    await handle.close();
  });

  it("switched off as the churn bench and the docs say: both off; switched off while running, it says so, and on again it warns again", async () => {
    const { handle, logger, store } = await make();
    await store.serverDaemons.check("couchdb");
    for (const channel of BUILT_IN) sections.set(`smoosh.${channel}`, { concurrency: "0" });
    sections.set("ken", { batch_channels: "0", incremental_channels: "0" });
    await store.serverDaemons.check("couchdb");
    expect(store.serverDaemons.status()).toMatchObject({ state: "known", smoosh: "off", ken: "off", smooshChannels: [] });
    expect(logger.lines.filter((l) => l.level === "info" && l.msg.includes("is off now")).map((l) => l.msg)).toEqual([
      "CouchDB's own smoosh is off now on couchdb@127.0.0.1",
      "CouchDB's own ken is off now on couchdb@127.0.0.1",
    ]);
    sections.set("smoosh.ratio_dbs", { concurrency: "2" });
    await store.serverDaemons.check("couchdb");
    expect(store.serverDaemons.status()).toMatchObject({ smoosh: "on", ken: "off", smooshChannels: ["couchdb@127.0.0.1: ratio_dbs"] });
    expect(logger.lines.filter((l) => l.level === "warn")).toHaveLength(3);
    expect(logger.lines.at(-1)?.msg).toContain("ratio_dbs concurrency 2");
    await handle.close();
  });

  // Where upholster does not do that work itself, CouchDB's daemon for it is shown, not warned about.
  it.each([
    { ownWork: { compaction: true, indexing: false }, why: "its indexing off", warned: "CouchDB's own smoosh runs " },
    { ownWork: { compaction: false, indexing: true }, why: "every channel at concurrency 0", warned: "CouchDB's own ken runs " },
  ])("an upholster with $why is warned only about the other daemon (both shown)", async ({ ownWork, warned }) => {
    const { handle, logger, store } = await make();
    store.serverDaemons.setOwnWork(ownWork);
    await store.serverDaemons.check("couchdb");
    expect(store.serverDaemons.status()).toMatchObject({ smoosh: "on", ken: "on" });
    expect(logger.lines.filter((l) => l.level === "warn").map((l) => l.msg.slice(0, warned.length))).toEqual([warned]);
    await handle.close();
  });

  it("a user who is not a server admin (401, as CouchDB 3.4.3 answers one): unknown, with why; nothing thrown, nothing warned", async () => {
    server.route("GET", "/_membership", { status: 401, body: exchange("17").response.body });
    const { handle, logger, store } = await make();
    await store.serverDaemons.check("couchdb");
    const status = store.serverDaemons.status();
    expect(status.state).toBe("unknown");
    expect(status.reason).toContain("You are not a server admin.");
    expect(logger.lines.filter((l) => l.level === "warn")).toEqual([]);
    // Said once, however often a status poller has it read again.
    await store.serverDaemons.check("couchdb");
    expect(logger.lines.filter((l) => l.msg.startsWith("cannot tell whether CouchDB's own smoosh and ken run"))).toHaveLength(1);
    await handle.close();
  });

  it("a section of another shape: unknown, naming the endpoint and the field; nothing thrown", async () => {
    sections.set("ken", { batch_channels: 0 } as unknown as ConfigSection);
    const { handle, store } = await make();
    await store.serverDaemons.check("couchdb");
    const status = store.serverDaemons.status();
    expect(status.state).toBe("unknown");
    expect(status.reason).toContain("GET /_node/couchdb%40127.0.0.1/_config/ken");
    expect(status.reason).toContain("batch_channels");
    await handle.close();
  });

  it("a server that cannot be reached: the last answer stays, and a status read asks again only a minute after the last try", async () => {
    const { handle, scheduler, store } = await make();
    await server.stop();
    await store.serverDaemons.check("couchdb");
    expect(store.serverDaemons.status()).toEqual({ state: "pending" });
    expect(store.serverDaemons.stale).toBe(false);
    scheduler.advanceBy(SERVER_DAEMONS_RECHECK_MS);
    expect(store.serverDaemons.stale).toBe(true);
    await handle.close();
  });

  it("PouchDB Server has no such daemons: nothing is asked", async () => {
    const { handle, store } = await make();
    await store.serverDaemons.check("pouchdb-server");
    expect(store.serverDaemons.status()).toEqual({ state: "not-couchdb" });
    expect(store.serverDaemons.stale).toBe(false);
    expect(server.requests).toEqual([]);
    await handle.close();
  });

  it("an answer goes stale a minute on (the status asks again then)", async () => {
    const { handle, scheduler, store } = await make();
    expect(store.serverDaemons.stale).toBe(true);
    await store.serverDaemons.check("couchdb");
    expect(store.serverDaemons.stale).toBe(false);
    scheduler.advanceBy(SERVER_DAEMONS_RECHECK_MS - 1);
    expect(store.serverDaemons.stale).toBe(false);
    scheduler.advanceBy(1);
    expect(store.serverDaemons.stale).toBe(true);
    await handle.close();
  });

  describe("the server's [chttpd] max_db_number_for_dbs_info_req", () => {
    /** CouchDB 3.4.3's refusal beyond `limit` keys. */
    const dbsInfoWithLimit = (limit: number) =>
      server.route("POST", "/_dbs_info", (req) => {
        const keys = (JSON.parse(req.body) as { keys: string[] }).keys;
        if (keys.length > limit) return { status: 400, body: { error: "bad_request", reason: "too_many_keys" } };
        return { status: 200, body: keys.map((key) => ({ key, info: { ...(exchange("24").response.body as object), db_name: key } })) };
      });
    const keysPerPost = () => server.requests.filter((r) => r.path === "/_dbs_info").map((r) => ({ keys: (JSON.parse(r.body) as { keys: string[] }).keys.length }));

    it("read from the config, batches fit it from the first: nothing refused, nothing to learn", async () => {
      sections.set("chttpd", { max_db_number_for_dbs_info_req: "7" });
      dbsInfoWithLimit(7);
      const { handle, logger, store } = await make();
      // The read is under way when the first batch is asked for: the batch waits for it.
      const reading = store.serverDaemons.check("couchdb");
      const infos = await store.dbInfos?.(Array.from({ length: 20 }, (_, i) => `db_${i}`));
      await reading;
      expect(infos?.size).toBe(20);
      expect(keysPerPost().map((p) => p.keys)).toEqual([7, 7, 6]);
      expect(store.dbInfosBatchSize).toBe(7);
      expect(handle.status().dbsInfoKeysPerRequest).toBe(7);
      expect(logger.lines.filter((l) => l.level === "warn" && l.msg.includes("too_many_keys"))).toEqual([]);
      expect(logger.lines.some((l) => l.msg.startsWith("CouchDB's [chttpd] max_db_number_for_dbs_info_req, read from its config"))).toBe(true);
      await handle.close();
    });

    it("a read of the config that hangs holds a _dbs_info up for 5 s at most; the batch then learns the limit from refusals", async () => {
      server.route("GET", `${NODE_CONFIG}chttpd`, { status: 200, body: {}, silent: true });
      dbsInfoWithLimit(7);
      const { handle, scheduler, store } = await make();
      void store.serverDaemons.check("couchdb");
      let done = false;
      const infos = store.dbInfos?.(Array.from({ length: 20 }, (_, i) => `db_${i}`)).then((result) => {
        done = true;
        return result;
      });
      // The config's requests go out (the last one never answers); the batch waits for them.
      await waitFor(() => server.count("GET", `${NODE_CONFIG}chttpd`) === 1, "the chttpd section asked for");
      expect(done).toBe(false);
      expect(keysPerPost()).toEqual([]);
      await scheduler.advanceByAsync(SETTLE_MAX_WAIT_MS - 1);
      expect(done).toBe(false);
      await scheduler.advanceByAsync(1);
      expect((await infos)?.size).toBe(20);
      expect(keysPerPost().map((p) => p.keys)[0]).toBe(20);
      expect(store.serverDaemons.status()).toEqual({ state: "pending" });
      // The hung request ends with the server (else closing the client would wait for its timeout).
      await server.stop();
      await handle.close();
    });

    it("a server limit above upholster's keeps upholster's (it never asks for more than it was configured with)", async () => {
      sections.set("chttpd", { max_db_number_for_dbs_info_req: "1000" });
      dbsInfoWithLimit(1000);
      const { handle, store } = await make({ dbsInfoMaxKeys: 40 });
      await store.serverDaemons.check("couchdb");
      await store.dbInfos?.(Array.from({ length: 90 }, (_, i) => `db_${i}`));
      expect(keysPerPost().map((p) => p.keys)).toEqual([40, 40, 10]);
      await handle.close();
    });

    it("not readable (no admin): learnt from refusals as before", async () => {
      server.route("GET", "/_membership", { status: 401, body: exchange("17").response.body });
      dbsInfoWithLimit(30);
      const { handle, store } = await make();
      await store.serverDaemons.check("couchdb");
      await store.dbInfos?.(Array.from({ length: 70 }, (_, i) => `db_${i}`));
      expect(keysPerPost().map((p) => p.keys)).toEqual([70, 35, 17, 26, 27]);
      await handle.close();
    });
  });
});
