/**
 * `/_db_updates` query parameters, decoded with io-ts into one value, with
 * CouchDB 3.4's 400 bodies for what it rejects:
 * - a bad integer (`limit`, `timeout`, `heartbeat`): `invalid_integer`, and
 *   (deliberately, CouchDB says only that) the parameter and its value:
 *   `invalid_integer: limit must be a non-negative integer, got "abc"`;
 * - `descending` other than `true`/`false` (CouchDB takes it as false):
 *   `descending must be true or false, got "maybe"`;
 * - an unknown `feed`: "Supported `feed` types: normal, continuous, longpoll, eventsource";
 * - a bad `since`: "Malformed sequence supplied in 'since' parameter.".
 * Unknown parameters are ignored, as CouchDB does. When a parameter repeats,
 * the first value counts.
 */
import * as t from "io-ts";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";

export const FEED_TYPES = ["normal", "longpoll", "continuous", "eventsource"] as const;
export type FeedType = (typeof FEED_TYPES)[number];

export type Since = { readonly kind: "now" } | { readonly kind: "seq"; readonly seq: string };

export interface FeedParams {
  readonly feed: FeedType;
  readonly since: Since;
  readonly limit: number | undefined;
  readonly descending: boolean;
  /** undefined: no heartbeat. With a heartbeat the feed stays open past `timeoutMs` (as CouchDB, fixture 78). */
  readonly heartbeatMs: number | undefined;
  readonly timeoutMs: number;
}

export interface BadRequest {
  readonly error: "bad_request";
  readonly reason: string;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
/** `heartbeat=true` means 60 s, as CouchDB. */
export const DEFAULT_HEARTBEAT_MS = 60_000;
/**
 * Deliberate difference: CouchDB accepts `heartbeat=0`; we raise heartbeats
 * below this to it, so a client cannot make the server spin writing newlines.
 */
export const MIN_HEARTBEAT_MS = 100;

const FEED_REASON = "Supported `feed` types: normal, continuous, longpoll, eventsource";
const SINCE_REASON = "Malformed sequence supplied in 'since' parameter.";

/** CouchDB's `to_non_neg_int`: decimal digits only (an optional sign is not accepted by us; `-1` fails too). */
const NonNegIntParam = new t.Type<number, string, unknown>(
  "non-negative integer",
  (u): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0,
  (u, c) =>
    typeof u === "string" && /^\+?\d+$/.test(u) && Number.isSafeInteger(Number(u)) ? t.success(Number(u)) : t.failure(u, c),
  String,
);

const FeedParam = t.keyof({ normal: null, longpoll: null, continuous: null, eventsource: null });

/**
 * Sequences: `now`, `0`, an integer, or CouchDB's clustered `N-<base64url>`.
 * Opaque otherwise; anything else is malformed. `N` is written as stores
 * write it (no leading zeros) and is a safe integer: no store has a seq
 * past 2^53, and one it cannot read would fail the feed's read instead (a
 * 503, not the client's 400).
 */
const SEQ = /^(0|[1-9]\d*)(-[A-Za-z0-9_-]+)?$/;
const isSeq = (u: string): boolean => {
  const match = SEQ.exec(u);
  return match !== null && Number.isSafeInteger(Number(match[1]));
};
const SinceParam = new t.Type<Since, string, unknown>(
  "since",
  (u): u is Since => typeof u === "object" && u !== null && "kind" in u,
  (u, c) => {
    if (u === "now") return t.success({ kind: "now" });
    if (typeof u === "string" && isSeq(u)) return t.success({ kind: "seq", seq: u });
    return t.failure(u, c);
  },
  (s) => (s.kind === "now" ? "now" : s.seq),
);

const badRequest = (reason: string): BadRequest => ({ error: "bad_request", reason });

/** The value as the client sent it, quoted, cut short: a reason names it without echoing a whole URL back. */
const shown = (raw: string): string => JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}...` : raw);

const invalidInteger = (name: string, raw: string): BadRequest =>
  badRequest(`invalid_integer: ${name} must be a non-negative integer, got ${shown(raw)}`);

const DescendingParam = t.keyof({ true: null, false: null });

export function decodeFeedParams(query: URLSearchParams): Either<BadRequest, FeedParams> {
  // CouchDB parses the integers before looking at `feed`, so invalid_integer wins over a bad feed.
  const ints: Record<"limit" | "timeout" | "heartbeat", number | undefined> = { limit: undefined, timeout: undefined, heartbeat: undefined };
  for (const name of ["limit", "timeout", "heartbeat"] as const) {
    const raw = query.get(name);
    if (raw === null || (name === "heartbeat" && raw === "true")) continue;
    const decoded = NonNegIntParam.decode(raw);
    if (isLeft(decoded)) return left(invalidInteger(name, raw));
    ints[name] = decoded.right;
  }
  const rawSince = query.get("since");
  let since: Since = { kind: "seq", seq: "0" };
  if (rawSince !== null) {
    const decoded = SinceParam.decode(rawSince);
    if (isLeft(decoded)) return left(badRequest(SINCE_REASON));
    since = decoded.right;
  }
  const feedDecoded = FeedParam.decode(query.get("feed") ?? "normal");
  if (isLeft(feedDecoded)) return left(badRequest(FEED_REASON));
  const rawDescending = query.get("descending") ?? "false";
  if (isLeft(DescendingParam.decode(rawDescending))) return left(badRequest(`descending must be true or false, got ${shown(rawDescending)}`));
  const heartbeatRaw = query.get("heartbeat");
  const heartbeatMs =
    heartbeatRaw === "true" ? DEFAULT_HEARTBEAT_MS : ints.heartbeat === undefined ? undefined : Math.max(MIN_HEARTBEAT_MS, ints.heartbeat);
  return right({
    feed: feedDecoded.right,
    since,
    limit: ints.limit,
    descending: rawDescending === "true",
    heartbeatMs,
    timeoutMs: ints.timeout ?? DEFAULT_TIMEOUT_MS,
  });
}
