/**
 * What upholster last learnt of CouchDB's own smoosh and ken (server-daemons.ts):
 * read at start, every ten minutes while it runs, and when the status is read
 * a minute or more after the last read (the status subsystem in
 * src/cli/choose-store.ts asks); warned about when one is seen running where
 * it was not, told when it stops. The `_dbs_info` limit read with them goes
 * to the store. One read at a time; a read that fails (the server
 * unreachable) keeps the last answer until the next one.
 */
import * as t from "io-ts";
import type { Logger, Scheduler } from "../../ports/shell.js";
import type { CouchClient } from "./client.js";
import { kenWarning, readServerDaemons, serverDbsInfoMaxKeys, smooshWarning, type ServerDaemons } from "./server-daemons.js";
import type { ServerCapabilities } from "./store.js";

/** How long a `_dbs_info` waits at most for a read of the config under way. */
export const SETTLE_MAX_WAIT_MS = 5_000;

/** How old an answer may be before a status read asks again. */
export const SERVER_DAEMONS_RECHECK_MS = 60_000;

/**
 * How often a running upholster reads them again on its own: an operator who
 * switches CouchDB's smoosh or ken on later is warned within this, status
 * read or not, for about ten requests a node each time.
 */
export const SERVER_DAEMONS_REREAD_MS = 10 * 60_000;

const OnOff = t.keyof({ on: null, off: null });

/**
 * The `serverDaemons` field of the `couchdb` status entry; `upholster status`
 * decodes it with the same codec.
 * - `state`: `pending` (not read yet), `known`, `unknown` (why in `reason`),
 *   `not-couchdb` (PouchDB Server: no such daemons);
 * - `smoosh`, `ken`: `on` when it runs on any node;
 * - `smooshChannels`: `node: channel` for every smoosh channel that runs.
 */
export const ServerDaemonsStatusC = t.intersection([
  t.type({ state: t.keyof({ pending: null, known: null, unknown: null, "not-couchdb": null }) }),
  t.partial({ checkedAt: t.string, smoosh: OnOff, ken: OnOff, smooshChannels: t.array(t.string), nodes: t.number, reason: t.string }),
]);
export type ServerDaemonsStatus = t.TypeOf<typeof ServerDaemonsStatusC>;

export class ServerDaemonsWatch {
  private last: ServerDaemons | "not-couchdb" | undefined;
  private checkedAtMs: number | undefined;
  /** When the last read began, answered or not: a status read asks again a minute on (a server down then is not asked at every status read). */
  private askedAtMs: number | undefined;
  private reading: Promise<void> | undefined;
  /** `<daemon>@<node>` seen running at the last answer. */
  private running = new Set<string>();
  /**
   * What upholster itself does here: a CouchDB daemon is warned about only
   * where it doubles upholster's work (CouchDB's ken beside an upholster
   * whose indexing is off is how that operator wants it). Both by default.
   */
  private ownWork = { compaction: true, indexing: true };

  constructor(
    private readonly client: CouchClient,
    private readonly logger: Logger,
    private readonly scheduler: Scheduler,
    /** The server's `_dbs_info` key limit, each time it is read. */
    private readonly onDbsInfoLimit: (limit: number) => void,
  ) {}

  /** Whether upholster compacts (some channel with a concurrency above 0) and builds indexes here (`[fabric] index_updater_enabled`). */
  setOwnWork(ownWork: { readonly compaction: boolean; readonly indexing: boolean }): void {
    this.ownWork = { ...ownWork };
  }

  /** Read now (unless a read is under way). PouchDB Server has none of these daemons: nothing is asked. Never rejects. */
  check(vendor: ServerCapabilities["vendor"]): Promise<void> {
    if (vendor === "pouchdb-server") {
      this.last = "not-couchdb";
      return Promise.resolve();
    }
    if (this.reading === undefined) this.askedAtMs = this.scheduler.nowMs();
    this.reading ??= readServerDaemons(this.client)
      .then((daemons) => this.learn(daemons))
      .catch((error: unknown) => this.logger.debug({ error: error instanceof Error ? error.message : String(error) }, "could not read CouchDB's config (its own daemons); will ask again"))
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  /**
   * Resolves when no read is under way, or after `SETTLE_MAX_WAIT_MS`: the
   * store waits for one before a `_dbs_info`, so the limit applies from the
   * first; a read held up by a slow server (retries, timeouts) must not hold
   * the checks up with it (they then learn the limit from refusals).
   */
  settled(): Promise<void> {
    const reading = this.reading;
    if (reading === undefined) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const cancel = this.scheduler.setTimeout(resolve, SETTLE_MAX_WAIT_MS);
      void reading.then(() => {
        cancel();
        resolve();
      });
    });
  }

  /** Whether a status read should ask again (never asked, or asked a minute or more ago). */
  get stale(): boolean {
    return this.last !== "not-couchdb" && (this.askedAtMs === undefined || this.scheduler.nowMs() - this.askedAtMs >= SERVER_DAEMONS_RECHECK_MS);
  }

  status(): ServerDaemonsStatus {
    const last = this.last;
    if (last === undefined) return { state: "pending" };
    if (last === "not-couchdb") return { state: "not-couchdb" };
    const checkedAt = new Date(this.checkedAtMs ?? 0).toISOString();
    if (last.state === "unknown") return { state: "unknown", checkedAt, reason: last.reason };
    return {
      state: "known",
      checkedAt,
      smoosh: last.nodes.some((n) => n.smooshChannels.length > 0) ? "on" : "off",
      ken: last.nodes.some((n) => n.kenRuns) ? "on" : "off",
      smooshChannels: last.nodes.flatMap((n) => n.smooshChannels.map((c) => `${n.node}: ${c.channel}`)),
      nodes: last.nodes.length,
    };
  }

  private learn(daemons: ServerDaemons): void {
    const previous = this.last;
    this.last = daemons;
    this.checkedAtMs = this.scheduler.nowMs();
    if (daemons.state === "unknown") {
      // Said once per reason, not at every read a status poller brings.
      if (previous === undefined || previous === "not-couchdb" || previous.state !== "unknown" || previous.reason !== daemons.reason) {
        this.logger.info({ reason: daemons.reason }, "cannot tell whether CouchDB's own smoosh and ken run (their config could not be read); if they do, they compact and index beside upholster");
      }
      return;
    }
    const limit = serverDbsInfoMaxKeys(daemons);
    if (limit !== undefined) this.onDbsInfoLimit(limit);
    const running = new Set<string>();
    for (const node of daemons.nodes) {
      if (this.ownWork.compaction) this.note(running, "smoosh", node.node, node.smooshChannels.length > 0, () => smooshWarning(node));
      if (this.ownWork.indexing) this.note(running, "ken", node.node, node.kenRuns, () => kenWarning(node));
    }
    this.running = running;
  }

  /** Warn when a daemon is seen running that was not at the last answer; say when one stopped. */
  private note(running: Set<string>, daemon: "smoosh" | "ken", node: string, runs: boolean, warning: () => string): void {
    const key = `${daemon}@${node}`;
    if (runs) {
      running.add(key);
      if (!this.running.has(key)) this.logger.warn({ daemon: key }, warning());
    } else if (this.running.has(key)) this.logger.info({ daemon: key }, `CouchDB's own ${daemon} is off now on ${node}`);
  }
}
