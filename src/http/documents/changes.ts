/**
 * `GET|POST /{db}/_changes`, `feed=normal` and `feed=longpoll`, written as
 * CouchDB 3.4 writes them (fixtures 53-65): `{"results":[` then one row per
 * line (`{seq,id,changes:[{rev}],deleted?,doc?}`, separated by `,\r\n`),
 * then `"last_seq"` and `"pending"`.
 *
 * normal: answered at once, with an ETag (ours: a digest of the body) and
 * 304 for a matching `If-None-Match`.
 * longpoll: changes already there are answered at once; else headers,
 * `{"results":[` and a newline once the wait is in place, then the first
 * changes that pass the filter, or nothing when `timeout` passes (default
 * and cap 60 s); with `heartbeat`, a newline every beat and no timeout
 * (CouchDB's fabric_view_changes). The wait ends when the client goes away
 * or the db is deleted. `descending` answers at once, like a normal feed.
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { isLeft, right, type Either } from "fp-ts/lib/Either.js";
import type { Clock } from "../../ports/shell.js";
import { SERVER_HEADER } from "../respond.js";
import { routeTable, type MethodHandler, type RouteContext } from "../router.js";
import type { RouteHandler } from "../types.js";
import { selectChanges, type ChangesPage } from "./changes-page.js";
import { decodeChangesParams, type ChangesParams } from "./changes-params.js";
import { dbAccess, dbPath, withDb } from "./db-route.js";
import { isRefusal, type ChangeRow, type DocumentApi, type DocumentDb, type WaitOutcome } from "./document-api.js";
import { sendHttpError, type HttpError } from "./errors.js";
import { matchesEtag, sendNotModified } from "./etag.js";
import { readJsonObject } from "./request-body.js";

export interface ChangesRoutesOptions {
  readonly api: DocumentApi;
  /** For longpoll's deadline. */
  readonly clock: Clock;
}

const RESULTS_OPEN = '{"results":[\n';
const ROW_SEPARATOR = ",\r\n";
const WAITING = "\n";
const HEADERS = { "Content-Type": "application/json", "Cache-Control": "must-revalidate", Server: SERVER_HEADER };

const resultsClose = (page: Pick<ChangesPage, "lastSeq" | "pending">): string =>
  `\n],\n"last_seq":${JSON.stringify(page.lastSeq)},"pending":${page.pending}}\n\n`;

export function changesRoutes(options: ChangesRoutesOptions): RouteHandler {
  const handler: MethodHandler = (ctx) => changes(options, ctx);
  return routeTable([{ path: dbPath("/_changes"), access: dbAccess, methods: { GET: handler, POST: handler, HEAD: handler } }]);
}

async function changes(options: ChangesRoutesOptions, ctx: RouteContext): Promise<void> {
  await withDb(options.api, ctx, async (db) => {
    const body = await readBodyObject(ctx);
    const params = isLeft(body) ? body : decodeChangesParams(ctx.url.searchParams, body.right);
    if (isLeft(params)) return sendHttpError(ctx.res, params.left);
    if (params.right.feed === "longpoll" && !params.right.descending && params.right.limit !== 0) {
      return longpoll(ctx.res, db, params.right, options.clock);
    }
    await normal(ctx, db, params.right);
  });
}

/** POST: a JSON object (for `doc_ids`), or nothing; GET: `undefined`. */
async function readBodyObject(ctx: RouteContext): Promise<Either<HttpError, Readonly<Record<string, unknown>> | undefined>> {
  return ctx.req.method === "POST" ? readJsonObject(ctx.req) : right(undefined);
}

async function normal(ctx: RouteContext, db: DocumentDb, params: ChangesParams): Promise<void> {
  const page = selectChanges(await db.changes(params.descending ? "0" : params.since), params);
  const rows = await rowTexts(db, page.rows, params.includeDocs);
  const text = `${RESULTS_OPEN}${rows.join(ROW_SEPARATOR)}${resultsClose(page)}`;
  const etag = `"${createHash("md5").update(text).digest("base64url")}"`;
  if (matchesEtag(ctx.req, etag)) return sendNotModified(ctx.res, etag);
  ctx.res.writeHead(200, { ...HEADERS, ETag: etag, "Content-Length": String(Buffer.byteLength(text)) });
  ctx.res.end(text);
}

/**
 * The longpoll response: headers, `{"results":[` and the waiting newline go
 * out once the first wait is in place (so a refused wait is still a clean
 * 503); an answer found before any wait goes out whole.
 */
class LongpollResponse {
  private opened = false;

  constructor(private readonly res: ServerResponse) {}

  get isOpen(): boolean {
    return this.opened;
  }

  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.writeHead(200, HEADERS);
    this.res.write(`${RESULTS_OPEN}${WAITING}`);
  }

  heartbeat(): void {
    this.res.write(WAITING);
  }

  end(rows: readonly string[], page: Pick<ChangesPage, "lastSeq" | "pending">): void {
    if (!this.opened) this.res.writeHead(200, HEADERS);
    this.res.end(`${this.opened ? "" : RESULTS_OPEN}${rows.join(ROW_SEPARATOR)}${resultsClose(page)}`);
  }
}

async function longpoll(res: ServerResponse, db: DocumentDb, params: ChangesParams, clock: Clock): Promise<void> {
  const gone = new AbortController();
  res.on("close", () => gone.abort());
  const response = new LongpollResponse(res);
  const deadlineMs = clock.nowMs() + params.timeoutMs;
  let since = params.since;
  for (;;) {
    const slice = await db.changes(since);
    const page = selectChanges(slice, params);
    if (page.rows.length > 0) return response.end(await rowTexts(db, page.rows, params.includeDocs), page);
    since = slice.lastSeq;
    const waitMs = params.heartbeatMs ?? deadlineMs - clock.nowMs();
    const outcome = waitMs > 0 ? await waitOnce(db, since, waitMs, gone.signal, response) : "timeout";
    if (outcome === "aborted") return;
    if (outcome === "gone" || (outcome === "timeout" && params.heartbeatMs === undefined)) break;
    if (outcome === "timeout") response.heartbeat();
  }
  response.end([], { lastSeq: since, pending: 0 });
}

/** One wait; refused once the response is open (another client took the place), it ends the feed as a timeout would. */
async function waitOnce(db: DocumentDb, since: string, timeoutMs: number, signal: AbortSignal, response: LongpollResponse): Promise<WaitOutcome> {
  try {
    return await db.waitForChange(since, { timeoutMs, signal, onWaiting: () => response.open() });
  } catch (failure) {
    if (response.isOpen && isRefusal(failure)) return "gone";
    throw failure;
  }
}

/** CouchDB's row, members in its order; with `include_docs`, the doc at that revision (a tombstone for a deletion). */
async function rowTexts(db: DocumentDb, rows: readonly ChangeRow[], includeDocs: boolean): Promise<string[]> {
  const texts: string[] = [];
  for (const row of rows) {
    const doc = includeDocs ? { doc: (await db.getDoc(row.id)) ?? null } : {};
    texts.push(JSON.stringify({ seq: row.seq, id: row.id, changes: [{ rev: row.rev }], ...(row.deleted === true ? { deleted: true } : {}), ...doc }));
  }
  return texts;
}
