/**
 * Deterministic revision ids, CouchDB-style: `N-<32 hex>`, the hash over the
 * id, the generation, the previous revision, the deleted flag and the body,
 * so equal edits of a document give equal revs. CouchDB hashes the same
 * inputs but the id (MD5 of their Erlang terms), so there equal edits of
 * different documents share a rev too, and b-tree leaves full of them
 * compress (docs/benchmarks.md, "Compressed bodies"); not here.
 */
import * as crypto from "node:crypto";

/**
 * A digest as hex in one call where Node has it (`crypto.hash`, Node >= 20.12):
 * a Hash object per write was a twentieth of a simulated write.
 */
const hexDigest: (algorithm: string, text: string) => string =
  typeof crypto.hash === "function"
    ? (algorithm, text) => crypto.hash(algorithm, text, "hex")
    : (algorithm, text) => crypto.createHash(algorithm).update(text).digest("hex");

/** CouchDB's rev hash is 128 bits, 32 hex digits. */
const REV_HASH_HEX_DIGITS = 32;

/**
 * The rev's hash is SHA-1 cut to CouchDB's 32 hex digits, not MD5: nothing
 * compares it with CouchDB's (the inputs differ anyway, see above), and with
 * the CPU's SHA instructions it took 0.55 us for a 500-byte write where MD5
 * took 0.95 us (docs/benchmarks.md, "Bodies kept as JSON text, revs hashed with SHA-1").
 */
export function makeRev(id: string, generation: number, previousRev: string | undefined, deleted: boolean, bodyJson: string): string {
  const hash = hexDigest("sha1", `${id}\u0000${generation}\u0000${previousRev ?? ""}\u0000${deleted ? 1 : 0}\u0000${bodyJson}`);
  return `${generation}-${hash.slice(0, REV_HASH_HEX_DIGITS)}`;
}

/**
 * The generation of `N-hash`, or `undefined` when `rev` is not of that form
 * (`/^([1-9][0-9]*)-[0-9a-f]+$/`, scanned by hand: it runs on every update).
 */
export function revGeneration(rev: string): number | undefined {
  const dash = rev.indexOf("-");
  if (dash < 1 || dash === rev.length - 1) return undefined;
  let code = rev.charCodeAt(0);
  if (code < 49 || code > 57) return undefined; // 1-9
  for (let i = 1; i < dash; i++) {
    code = rev.charCodeAt(i);
    if (code < 48 || code > 57) return undefined; // 0-9
  }
  for (let i = dash + 1; i < rev.length; i++) {
    code = rev.charCodeAt(i);
    if (!((code >= 48 && code <= 57) || (code >= 97 && code <= 102))) return undefined; // 0-9a-f
  }
  const generation = Number(rev.slice(0, dash));
  return Number.isSafeInteger(generation) ? generation : undefined;
}

/** Stable hex digest of any JSON value (object keys sorted), e.g. a view group signature. */
export function stableDigest(value: unknown): string {
  return hexDigest("md5", stableStringify(value));
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
