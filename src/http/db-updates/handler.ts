/**
 * `GET /_db_updates` with CouchDB 3.4's shapes: normal (ETag, 304),
 * longpoll, continuous, eventsource. Server admins only, by the server's
 * guard (auth/guard.ts) like every other admin route.
 *
 * Differences from CouchDB, on purpose:
 * - the ETag depends on the query and the feed's seq (CouchDB's depends on
 *   the db info only, so `?limit=1` and `?limit=2` share one);
 * - a store error while a continuous/eventsource feed is open does not end
 *   it: the feed keeps its heartbeats and resumes when the store is back;
 * - eventsource works (see framing.ts), sends its headers at once, and takes
 *   `Last-Event-ID` as `since` when no `since` is given (reconnects resume).
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isLeft } from "fp-ts/lib/Either.js";
import type { RouteHandler } from "../types.js";
import type { Logger, Scheduler } from "../../ports/shell.js";
import { ADMIN_VIEWER, decodeFeedParams, toRow, type DbUpdateRow, type FeedParams, type Viewer } from "../../core/db-updates/index.js";
import type { DbUpdatesFeed } from "./feed.js";
import { errorText } from "../../core/shared/error-text.js";
import type { Authenticator } from "../auth/types.js";
import { ADMIN_ONLY } from "../auth/access.js";
import { CLOSED_GUARD, createGuard } from "../auth/guard.js";
import { sendJson } from "../respond.js";
import { ClientStream } from "./client-stream.js";
import {
  CONTINUOUS_HEARTBEAT,
  EVENTSOURCE_HEARTBEAT,
  RESULTS_OPEN,
  ROW_SEPARATOR,
  continuousEnd,
  continuousRow,
  eventsourceRow,
  resultsClose,
} from "./framing.js";

export interface DbUpdatesHandlerOptions {
  readonly service: DbUpdatesFeed;
  /**
   * Only for serving the feed outside upholster's server (which gives every
   * route its guard): who may read it then. Absent there: nobody.
   */
  readonly authenticator?: Authenticator;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  /** A streaming client with more unsent output than this is disconnected. */
  readonly maxClientBufferBytes: number;
  /** How long the store is retried when it fails mid-stream before trying again. Default: 1 s. */
  readonly storeRetryMs?: number;
  /** A client that does not read for this long is disconnected. Default 60 s. */
  readonly drainTimeoutMs?: number;
}

/** Rows read from the store per call (a page bounds memory per client). */
const PAGE_ROWS = 1_000;

const JSON_HEADERS = { "Content-Type": "application/json", "Cache-Control": "must-revalidate" };
const SSE_HEADERS = { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" };


export function createDbUpdatesHandler(options: DbUpdatesHandlerOptions): RouteHandler {
  const { service, scheduler, logger } = options;
  const ownGuard = options.authenticator === undefined ? CLOSED_GUARD : createGuard({ authenticator: options.authenticator, logger });
  const storeRetryMs = options.storeRetryMs ?? 1_000;
  const drainTimeoutMs = options.drainTimeoutMs ?? 60_000;
  const onKill = (reason: string) => logger.warn({ reason }, "db updates: disconnecting a slow client");
  const newClient = (res: ServerResponse, headers: Record<string, string>) =>
    new ClientStream(res, headers, options.maxClientBufferBytes, scheduler, drainTimeoutMs, onKill);

  const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise((resolve) => {
      const cancel = scheduler.setTimeout(done, ms);
      function done() {
        cancel();
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done);
    });

  /** Reads one page; rows the viewer may not see (or foreign docs) are left out. */
  async function readRows(since: string, limit: number | undefined, descending: boolean, viewer: Viewer) {
    const page = await service.readChanges({ since, limit, descending });
    const rows: DbUpdateRow[] = [];
    for (const r of page.results) {
      const row = toRow(r.id, r.seq, viewer);
      if (row !== undefined) rows.push(row);
    }
    return { rows, rawCount: page.results.length, lastSeq: page.lastSeq };
  }

  async function normal(req: IncomingMessage, res: ServerResponse, params: FeedParams, since: string, viewer: Viewer) {
    const current = await service.currentSeq();
    const etag = `"${etagOf(current, params, since, viewer)}"`;
    const ifNoneMatch = req.headers["if-none-match"];
    if (ifNoneMatch !== undefined && ifNoneMatch.split(",").some((t) => t.trim() === etag)) {
      res.writeHead(304, { ETag: etag });
      res.end();
      return;
    }
    // Read everything before the headers: a store error is then a clean 503, not a cut stream.
    // Memory is bounded by the feed's size (3 rows per db at most: events are coalesced per key).
    const { parts, lastSeq } = await collect(params, since, viewer);
    const body = `${RESULTS_OPEN}${parts.join(ROW_SEPARATOR)}${resultsClose(lastSeq)}`;
    res.writeHead(200, { ...JSON_HEADERS, Etag: etag });
    res.end(body);
  }

  async function collect(params: FeedParams, since: string, viewer: Viewer) {
    const parts: string[] = [];
    if (params.descending) {
      const page = await readRows(since, params.limit, true, viewer);
      return { parts: page.rows.map((r) => JSON.stringify(r)), lastSeq: page.lastSeq };
    }
    let cursor = since;
    let remaining = params.limit ?? Number.POSITIVE_INFINITY;
    for (;;) {
      const want = Math.min(remaining, PAGE_ROWS);
      const page = await readRows(cursor, want, false, viewer);
      for (const r of page.rows) parts.push(JSON.stringify(r));
      cursor = page.lastSeq;
      remaining -= page.rawCount;
      if (page.rawCount < want || remaining <= 0) return { parts, lastSeq: cursor };
    }
  }

  async function longpoll(res: ServerResponse, params: FeedParams, since: string, viewer: Viewer) {
    const client = newClient(res, JSON_HEADERS);
    let cursor = since;
    const deadlineMs = scheduler.nowMs() + params.timeoutMs;
    for (;;) {
      if (client.closed) return;
      const { parts, lastSeq } = await collect({ ...params, descending: false }, cursor, viewer);
      cursor = lastSeq;
      if (parts.length > 0) return client.end(`${RESULTS_OPEN}${parts.join(ROW_SEPARATOR)}${resultsClose(cursor)}`);
      const waitMs = params.heartbeatMs ?? Math.max(0, deadlineMs - scheduler.nowMs());
      if (params.heartbeatMs === undefined && waitMs <= 0) break;
      const result = await service.waitForChange(cursor, waitMs, client.signal);
      if (result === "aborted") return;
      if (result === "stopped") break;
      // JSON allows whitespace before the object: the heartbeat keeps proxies from timing out.
      if (result === "timeout" && params.heartbeatMs !== undefined) await client.write(CONTINUOUS_HEARTBEAT);
    }
    client.end(`${RESULTS_OPEN}${resultsClose(cursor)}`);
  }

  async function stream(res: ServerResponse, params: FeedParams, since: string, viewer: Viewer) {
    const sse = params.feed === "eventsource";
    const client = newClient(res, sse ? SSE_HEADERS : JSON_HEADERS);
    if (sse) client.open();
    const frame = sse ? eventsourceRow : continuousRow;
    const heartbeat = sse ? EVENTSOURCE_HEARTBEAT : CONTINUOUS_HEARTBEAT;
    let cursor = since;
    let remaining = params.limit ?? Number.POSITIVE_INFINITY;
    let idleSinceMs = scheduler.nowMs();
    while (!client.closed) {
      try {
        const want = Math.min(remaining, PAGE_ROWS);
        const page = await readRows(cursor, want, false, viewer);
        for (const row of page.rows) await client.write(frame(row));
        cursor = page.lastSeq;
        remaining -= page.rawCount;
        if (page.rawCount > 0) idleSinceMs = scheduler.nowMs();
        if (remaining <= 0) break;
        if (page.rawCount === want) continue;
      } catch (e) {
        logger.warn({ error: errorText(e) }, "db updates: feed read failed, retrying");
        await sleep(Math.min(storeRetryMs, params.heartbeatMs ?? storeRetryMs), client.signal);
        if (params.heartbeatMs !== undefined) await client.write(heartbeat);
        else if (scheduler.nowMs() - idleSinceMs >= params.timeoutMs) break;
        continue;
      }
      // With a heartbeat the feed stays open past `timeout` (CouchDB, fixture 78); without, it ends after `timeout` idle.
      const waitMs = params.heartbeatMs ?? idleSinceMs + params.timeoutMs - scheduler.nowMs();
      if (waitMs <= 0) break;
      const result = await service.waitForChange(cursor, waitMs, client.signal);
      if (result === "aborted") return;
      if (result === "stopped") break;
      if (result === "timeout" && params.heartbeatMs !== undefined) await client.write(heartbeat);
    }
    client.end(sse ? "\n" : continuousEnd(cursor));
  }

  return async (req, res, url, scope) => {
    if (url.pathname !== "/_db_updates") return false;
    // Who may read it first, then the method: CouchDB authorizes a path before it routes it.
    if ((await (scope?.guard ?? ownGuard).admit(req, res, ADMIN_ONLY)) === undefined) return true;
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendJson(res, 405, { error: "method_not_allowed", reason: "Only GET,HEAD allowed" }, { Allow: "GET,HEAD" });
      return true;
    }
    const decoded = decodeFeedParams(url.searchParams);
    if (isLeft(decoded)) {
      sendJson(res, 400, decoded.left);
      return true;
    }
    let params = decoded.right;
    const lastEventId = req.headers["last-event-id"];
    if (params.feed === "eventsource" && !url.searchParams.has("since") && typeof lastEventId === "string") {
      const resumed = decodeFeedParams(new URLSearchParams([...url.searchParams, ["since", lastEventId]]));
      if (!isLeft(resumed)) params = resumed.right;
    }
    const viewer = ADMIN_VIEWER;
    try {
      const since = params.since.kind === "now" ? await service.currentSeq() : params.since.seq;
      if (params.feed === "normal") await normal(req, res, params, since, viewer);
      else if (params.feed === "longpoll") await longpoll(res, params, since, viewer);
      else await stream(res, params, since, viewer);
    } catch (e) {
      logger.warn({ error: errorText(e), feed: params.feed }, "db updates: feed failed");
      if (!res.headersSent) sendJson(res, 503, { error: "service_unavailable", reason: `The db updates feed is unavailable: ${errorText(e)}` });
      else res.destroy();
    }
    return true;
  };
}

/** CouchDB-looking ETag (25 base-36 characters) over what determines the body. */
function etagOf(currentSeq: string, params: FeedParams, since: string, viewer: Viewer): string {
  const digest = createHash("sha1")
    .update(JSON.stringify([currentSeq, since, params.limit ?? null, params.descending, viewer]))
    .digest("hex");
  return BigInt(`0x${digest}`).toString(36).toUpperCase().padStart(25, "0").slice(0, 25);
}
