/**
 * `GET|POST /{db}/_changes` parameters, decoded with io-ts, with CouchDB
 * 3.4's 400 bodies where it has them (fixtures 58-60: `filter`, `since`,
 * `feed`; `heartbeat`; `doc_ids`).
 *
 * Differences, on purpose: where CouchDB crashes (500 for `limit=x`,
 * `timeout=x`, `style=x`) or silently takes a bad value as false
 * (`descending=yes`, `include_docs=yes`), we answer 400 naming the
 * parameter and the value. Heartbeats below 100 ms are raised to 100 (a
 * client cannot make us spin). `feed=continuous|eventsource` and the
 * filters that run code (`ddoc/filter`, `_view`, `_selector`) are refused:
 * the embedded store serves `normal` and `longpoll`, `_design` and `_doc_ids`.
 */
import * as t from "io-ts";
import { sequenceS } from "fp-ts/lib/Apply.js";
import { Apply as EitherApply, isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { badRequest, notSupported, type HttpError } from "./errors.js";

export type ChangesFilter =
  | { readonly kind: "all" }
  | { readonly kind: "design" }
  | { readonly kind: "doc_ids"; readonly ids: ReadonlySet<string> };

export interface ChangesParams {
  readonly feed: "normal" | "longpoll";
  /** `now`, `0`, or a seq (`N` or CouchDB's `N-opaque`). */
  readonly since: string;
  readonly limit?: number | undefined;
  readonly descending: boolean;
  readonly includeDocs: boolean;
  readonly filter: ChangesFilter;
  /** Longpoll without heartbeat: answer empty after this (CouchDB: `timeout`, at most `changes_timeout`, 60 s). */
  readonly timeoutMs: number;
  /** Longpoll with heartbeat: a newline this often, and no timeout (CouchDB, fabric_view_changes). */
  readonly heartbeatMs?: number | undefined;
}

/** CouchDB's `[chttpd] changes_timeout`: the default and the cap of `timeout`. */
export const CHANGES_TIMEOUT_MS = 60_000;
export const MIN_HEARTBEAT_MS = 100;

const SinceText = t.refinement(t.string, (s) => s === "now" || /^\d+(-[A-Za-z0-9_-]+)?$/.test(s), "a sequence");
const NonNegativeIntText = t.refinement(t.string, (s) => /^\+?\d+$/.test(s) && Number.isSafeInteger(Number(s)), "a non-negative integer");
const BooleanText = t.keyof({ true: null, false: null });
const DocIds = t.array(t.string);

/** The value as the client sent it, quoted, cut short (a reason never echoes a whole URL back). */
const shownValue = (raw: string): string => JSON.stringify(raw.length > 60 ? `${raw.slice(0, 57)}...` : raw);

const mustBe = (name: string, what: string, raw: string): HttpError => badRequest(`${name} must be ${what}, got ${shownValue(raw)}`);

function optionalInteger(query: URLSearchParams, name: string): Either<HttpError, number | undefined> {
  const raw = query.get(name);
  if (raw === null) return right(undefined);
  return NonNegativeIntText.is(raw) ? right(Number(raw)) : left(mustBe(name, "a non-negative integer", raw));
}

function flag(query: URLSearchParams, name: string): Either<HttpError, boolean> {
  const raw = query.get(name) ?? "false";
  return BooleanText.is(raw) ? right(raw === "true") : left(mustBe(name, "true or false", raw));
}

function feedOf(query: URLSearchParams): Either<HttpError, ChangesParams["feed"]> {
  const feed = query.get("feed") ?? "normal";
  if (feed === "normal" || feed === "longpoll") return right(feed);
  if (["continuous", "live", "eventsource"].includes(feed)) return left(notSupported(`feed=${feed} (use normal or longpoll)`));
  return left(badRequest("Supported `feed` types: normal, continuous, live, longpoll, eventsource"));
}

function sinceOf(query: URLSearchParams): Either<HttpError, string> {
  const since = query.get("since") ?? "0";
  return SinceText.is(since) ? right(since) : left(badRequest("Malformed sequence supplied in 'since' parameter."));
}

/** `heartbeat=true` is 60 s, as CouchDB. */
function heartbeatOf(query: URLSearchParams): Either<HttpError, number | undefined> {
  const raw = query.get("heartbeat");
  if (raw === null) return right(undefined);
  if (raw === "true") return right(CHANGES_TIMEOUT_MS);
  if (!/^[+-]?\d+$/.test(raw)) return left(badRequest("Invalid heartbeat value. Expecting a positive integer value (in milliseconds)."));
  const ms = Number(raw);
  if (!(ms > 0) || !Number.isSafeInteger(ms)) return left(badRequest("The heartbeat value should be a positive integer (in milliseconds)."));
  return right(Math.max(MIN_HEARTBEAT_MS, ms));
}

/** The other parameters CouchDB reads: checked, without effect here (no conflicts, no attachments). */
function checkIgnored(query: URLSearchParams): HttpError | undefined {
  const style = query.get("style");
  if (style !== null && style !== "main_only" && style !== "all_docs") return mustBe("style", "main_only or all_docs", style);
  const interval = query.get("seq_interval");
  if (interval !== null && !(NonNegativeIntText.is(interval) && Number(interval) > 0)) return badRequest("invalid_seq_interval");
  return undefined;
}

const DOC_IDS_REASON = "`doc_ids` filter parameter is not a list of doc ids.";

/** `doc_ids` from a POST body, else from the query string (JSON). */
function docIdsOf(query: URLSearchParams, body: Readonly<Record<string, unknown>> | undefined): Either<HttpError, ReadonlySet<string>> {
  let ids: unknown = body?.["doc_ids"];
  if (body === undefined) {
    try {
      ids = JSON.parse(query.get("doc_ids") ?? "null") as unknown;
    } catch {
      return left(badRequest(DOC_IDS_REASON));
    }
  }
  return DocIds.is(ids) ? right(new Set(ids)) : left(badRequest(DOC_IDS_REASON));
}

function filterOf(query: URLSearchParams, body: Readonly<Record<string, unknown>> | undefined): Either<HttpError, ChangesFilter> {
  const filter = query.get("filter") ?? "";
  if (filter === "") return right({ kind: "all" });
  if (filter === "_design") return right({ kind: "design" });
  if (filter === "_doc_ids") {
    const ids = docIdsOf(query, body);
    return isLeft(ids) ? ids : right({ kind: "doc_ids", ids: ids.right });
  }
  if (filter === "_view" || filter === "_selector") return left(notSupported(`filter=${filter}`));
  if (filter.startsWith("_")) return left(badRequest("unknown builtin filter name"));
  if (/^[^/]+\/[^/]+$/.test(filter)) return left(notSupported(`filter=${filter} (JavaScript filter functions)`));
  return left(badRequest("`filter` must be of the form `designname/filtername`"));
}

/** `body`: a POST's JSON object (`doc_ids`), `undefined` for GET. The first problem, in CouchDB's order, is answered. */
export function decodeChangesParams(query: URLSearchParams, body?: Readonly<Record<string, unknown>>): Either<HttpError, ChangesParams> {
  const decoded = sequenceS(EitherApply)({
    feed: feedOf(query),
    since: sinceOf(query),
    limit: optionalInteger(query, "limit"),
    timeout: optionalInteger(query, "timeout"),
    heartbeatMs: heartbeatOf(query),
    descending: flag(query, "descending"),
    includeDocs: flag(query, "include_docs"),
    filter: filterOf(query, body),
  });
  if (isLeft(decoded)) return decoded;
  const ignored = checkIgnored(query);
  if (ignored !== undefined) return left(ignored);
  const { timeout, ...params } = decoded.right;
  return right({ ...params, timeoutMs: Math.min(CHANGES_TIMEOUT_MS, timeout ?? CHANGES_TIMEOUT_MS) });
}
