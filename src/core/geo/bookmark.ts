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

const toBase64Url = (bytes: Uint8Array): string => {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};

const fromBase64Url = (text: string): Uint8Array => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("not base64url");
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const binary = atob(padded);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
};

export function encodeBookmark(bookmark: Bookmark): string {
  const entries = [...bookmark].map(([shard, key]) => [shard, key.distance, key.id, key.ordinal]);
  return toBase64Url(new TextEncoder().encode(JSON.stringify([BOOKMARK_VERSION, entries])));
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
  for (const hit of page) next.set(hit.shard, { distance: hit.distance, id: hit.id, ordinal: hit.ordinal });
  return next;
}
