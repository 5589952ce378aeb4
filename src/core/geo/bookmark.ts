/**
 * Bookmarks, as hastings_bookmark: for every shard, the key of the last hit
 * a page returned from it; the next page asks each shard for what comes
 * strictly after its key (shards that returned nothing yet start from the
 * beginning). A page with no rows leaves the bookmark as it was, so an
 * exhausted query keeps answering the same bookmark and no rows.
 *
 * Opaque to clients: base64url of JSON `[1, [[shard, distance, id, ordinal], ...]]`
 * (hastings packs an Erlang term instead; neither is meant to be read).
 * Anything that does not decode is a 400 `query_parse_error`, never a crash.
 */
import * as t from "io-ts";
import { left, right, type Either } from "fp-ts/lib/Either.js";
import type { HitKey } from "./order.js";

/** Shard key -> the last hit returned from that shard. */
export type Bookmark = ReadonlyMap<string, HitKey>;

export const emptyBookmark: Bookmark = new Map();

const BOOKMARK_VERSION = 1;

const FiniteC = t.refinement(t.number, Number.isFinite, "finite number");
const OrdinalC = t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 0, "ordinal");
const ShardEntryC = t.tuple([t.string, FiniteC, t.string, OrdinalC]);
export const BookmarkJsonC = t.tuple([t.literal(BOOKMARK_VERSION), t.array(ShardEntryC)]);

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** RFC 4648 base64url without padding (what btoa's output becomes with `+/` -> `-_` and the `=` cut), in one pass. */
const toBase64Url = (bytes: Uint8Array): string => {
  let text = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    text += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]! + BASE64URL[(n >> 6) & 63]! + BASE64URL[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    text += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    text += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]! + BASE64URL[(n >> 6) & 63]!;
  }
  return text;
};

const utf8 = new TextEncoder();

const fromBase64Url = (text: string): Uint8Array => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("not base64url");
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const binary = atob(padded);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
};

export function encodeBookmark(bookmark: Bookmark): string {
  const entries = [...bookmark].map(([shard, key]) => [shard, key.distance, key.id, key.ordinal]);
  return toBase64Url(utf8.encode(JSON.stringify([BOOKMARK_VERSION, entries])));
}

/** The bookmark, or `undefined` for anything malformed. */
export function decodeBookmark(text: string): Bookmark | undefined {
  try {
    const json: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fromBase64Url(text)));
    const decoded = BookmarkJsonC.decode(json);
    if (decoded._tag === "Left") return undefined;
    return new Map(decoded.right[1].map(([shard, distance, id, ordinal]) => [shard, { distance, id, ordinal }]));
  } catch {
    return undefined;
  }
}

/** `decodeBookmark` with hastings' `to_bookmark` error reason. */
export function parseBookmark(name: string, text: string): Either<string, Bookmark> {
  const bookmark = decodeBookmark(text);
  return bookmark === undefined ? left(`Invalid bookmark value for ${name}: '${JSON.stringify(text)}'`) : right(bookmark);
}

/** hastings_bookmark:update/2: each hit of the page, in order, becomes its shard's key. */
export function advanceBookmark(bookmark: Bookmark, page: readonly (HitKey & { readonly shard: string })[]): Bookmark {
  if (page.length === 0) return bookmark;
  const next = new Map(bookmark);
  // Each shard's last hit is its key; with one shard (the usual page) only that hit is looked at.
  const shard = page[0]!.shard;
  const hits = page.every((hit) => hit.shard === shard) ? page.slice(-1) : page;
  for (const hit of hits) next.set(hit.shard, { distance: hit.distance, id: hit.id, ordinal: hit.ordinal });
  return next;
}
