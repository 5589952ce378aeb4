/**
 * The feed does not lose what the source loses (issue #7, section 2).
 *
 * A source that drops the events around a restart, as CouchDB's own
 * `_db_updates` does when CouchDB restarts (its global_changes buffer is
 * lost), then signals `source-resumed`; and upholster itself restarted in the
 * middle, with events happening while it is down. A client follows the
 * continuous feed over loopback HTTP, reconnecting from its last seq as
 * clients do. It must end up having seen every created and deleted db: its
 * view equals the store's.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore, type MemoryStore } from "../../src/adapters/memory/index.js";
import { createMemoryStatePort } from "../../src/adapters/state/index.js";
import { createLocalAuthenticator } from "../../src/http/auth/index.js";
import type { StatePort } from "../../src/ports/shell.js";
import { dbUpdatesSubsystem, type DbUpdatesSubsystem } from "../../src/runtime/db-updates/index.js";
import { realScheduler } from "../../src/runtime/scheduler.js";
import { DroppingSource } from "./dropping-source.js";
import { ADMIN, ADMIN_AUTH, serve, silentLogger, waitFor } from "./helpers.js";

interface Row {
  readonly db_name: string;
  readonly type: string;
  readonly seq: string;
}

/** A feed client: continuous, and on any break it reconnects with the last seq it saw. */
class Follower {
  readonly rows: Row[] = [];
  private since = "now";
  private stopped = false;
  private response: IncomingMessage | undefined;
  connected = false;

  constructor(private readonly url: () => string | undefined) {}

  async run(): Promise<void> {
    while (!this.stopped) {
      const url = this.url();
      if (url !== undefined) await this.follow(url).catch(() => undefined);
      this.connected = false;
      if (!this.stopped) await new Promise((r) => setTimeout(r, 20));
    }
  }

  stop(): void {
    this.stopped = true;
    this.response?.destroy();
  }

  /** The dbs the client believes exist: created and not deleted since, in the order the rows came. */
  view(): string[] {
    const live = new Set<string>();
    for (const row of this.rows) {
      if (row.type === "created") live.add(row.db_name);
      if (row.type === "deleted") live.delete(row.db_name);
    }
    return [...live].sort();
  }

  private follow(url: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const path = `${url}/_db_updates?feed=continuous&heartbeat=100&since=${encodeURIComponent(this.since)}`;
      const req = httpRequest(path, { headers: { authorization: ADMIN_AUTH } }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return res.on("end", () => resolve());
        }
        this.response = res;
        this.connected = true;
        let buffer = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buffer += chunk;
          const lines = buffer.split("\n");
          buffer = lines.pop() ?? "";
          for (const line of lines) this.line(line);
        });
        res.on("close", () => resolve());
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
  }

  private line(line: string): void {
    if (line.trim() === "") return;
    const parsed = JSON.parse(line) as Partial<Row> & { last_seq?: string };
    if (parsed.seq !== undefined) this.since = parsed.seq;
    else if (parsed.last_seq !== undefined) this.since = parsed.last_seq;
    if (parsed.db_name !== undefined && parsed.type !== undefined && parsed.seq !== undefined) this.rows.push(parsed as Row);
  }
}

interface Upholster {
  readonly subsystem: DbUpdatesSubsystem;
  readonly source: DroppingSource;
  readonly url: string;
  stop(): Promise<void>;
}

const ini = {
  admins: { [ADMIN.name]: ADMIN.password },
  chttpd_auth: { iterations: "1000" },
  global_changes: { max_event_delay: "5", max_write_delay: "5", poll_interval_ms: "100", reconcile_requests_per_sec: "50", reconcile_page_size: "3" },
};

async function startUpholster(store: MemoryStore, state: StatePort): Promise<Upholster> {
  const scheduler = realScheduler({ unref: true });
  const authenticator = await createLocalAuthenticator({ config: ini, clock: scheduler });
  const subsystem = dbUpdatesSubsystem({ store, scheduler, config: ini, logger: silentLogger, authenticator, state });
  const source = new DroppingSource(store.createEventSource());
  await subsystem.start();
  await source.start((event) => subsystem.handleStoreEvent(event));
  const http = await serve(subsystem.routes);
  return {
    subsystem,
    source,
    url: http.url,
    async stop() {
      await http.close();
      await source.stop();
      await subsystem.stop();
    },
  };
}

const storeDbs = async (store: MemoryStore, feedDb: string): Promise<string[]> => (await store.listDbs()).filter((db) => db !== feedDb).sort();

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

describe("the feed does not lose what the source loses", () => {
  it("events dropped around a source restart and an upholster restart: the client still sees every created and deleted db", async () => {
    const store = createMemoryStore({ scheduler: realScheduler({ unref: true }), autoIndexDelayMs: false });
    const state = createMemoryStatePort();
    let current: Upholster | undefined = await startUpholster(store, state);
    const follower = new Follower(() => current?.url);
    const following = follower.run();
    cleanup.push(async () => {
      follower.stop();
      await following;
      await current?.stop();
    });
    await waitFor(() => follower.connected, "the client to follow the feed");
    const feedDb = current.subsystem.service.feedDbName;
    const created: string[] = [];
    const deleted: string[] = [];
    const create = (db: string): void => {
      store.createDb(db);
      store.putDoc(db, { _id: "doc" });
      created.push(db);
    };
    const remove = (db: string): void => {
      store.deleteDb(db);
      deleted.push(db);
    };

    for (let i = 0; i < 8; i++) create(`db${i}`);
    remove("db0");
    await waitFor(() => follower.rows.some((r) => r.db_name === "db0" && r.type === "deleted"), "the first events, delivered normally");

    // The source's restart: everything around it is lost.
    current.source.dropping = true;
    create("lost_before_restart");
    remove("db1");
    create("lost_then_deleted");
    remove("lost_then_deleted");

    // upholster restarts too; what happens while it is down reaches no one.
    await current.stop();
    current = undefined;
    create("while_down");
    remove("db2");
    current = await startUpholster(store, state);
    current.source.dropping = true;
    create("lost_after_restart");
    remove("db3");
    expect(current.source.dropped).toBeGreaterThan(0);
    current.source.resume();

    create("after_resume");
    remove("db4");
    const expected = await storeDbs(store, feedDb);
    await waitFor(() => JSON.stringify(follower.view()) === JSON.stringify(expected), "the client's view to equal the store's");
    expect(follower.view()).toEqual(expected);
    const saw = (type: string, db: string): boolean => follower.rows.some((r) => r.db_name === db && r.type === type);
    // A db whose whole life fell inside the gap left no trace anywhere (`_all_dbs` lists no deleted dbs): never invented either.
    const traceless = "lost_then_deleted";
    expect([saw("created", traceless), saw("deleted", traceless)]).toEqual([false, false]);
    for (const db of created.filter((d) => d !== traceless)) expect({ db, created: saw("created", db) }).toEqual({ db, created: true });
    for (const db of deleted.filter((d) => d !== traceless)) expect({ db, deleted: saw("deleted", db) }).toEqual({ db, deleted: true });
    // Each db still there was written: an `updated` row came after that write, too.
    for (const db of expected) expect({ db, updated: saw("updated", db) }).toEqual({ db, updated: true });
    expect(current.subsystem.metrics().reconcile_events).toBeGreaterThan(0);
  });

  it("without a reconciliation (no listing), the same drops are lost: the test above measures something", async () => {
    const store = createMemoryStore({ scheduler: realScheduler({ unref: true }), autoIndexDelayMs: false });
    const withoutListing = Object.assign(Object.create(store) as MemoryStore, { listDbsAfter: undefined, dbUpdateSeqs: undefined });
    const scheduler = realScheduler({ unref: true });
    const authenticator = await createLocalAuthenticator({ config: ini, clock: scheduler });
    const subsystem = dbUpdatesSubsystem({ store: withoutListing, scheduler, config: ini, logger: silentLogger, authenticator });
    const source = new DroppingSource(store.createEventSource());
    await subsystem.start();
    await source.start((event) => subsystem.handleStoreEvent(event));
    cleanup.push(async () => {
      await source.stop();
      await subsystem.stop();
    });
    expect(subsystem.reconciler).toBeUndefined();
    source.dropping = true;
    store.createDb("lost");
    source.resume();
    store.createDb("seen");
    await waitFor(async () => (await subsystem.service.readChanges({})).results.some((r) => r.id === "created:seen"), "the later event");
    const ids = (await subsystem.service.readChanges({})).results.map((r) => r.id);
    expect(ids).not.toContain("created:lost");
  });
});
