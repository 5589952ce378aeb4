/**
 * Deterministic revision ids, CouchDB-style: `N-<32 hex>`, the hash over the
 * id, the generation, the previous revision, the deleted flag and the body
 * (CouchDB hashes similar inputs with MD5, so equal edits give equal revs).
 */
import { createHash } from "node:crypto";

export function makeRev(id: string, generation: number, previousRev: string | undefined, deleted: boolean, bodyJson: string): string {
  const hash = createHash("md5")
    .update(`${id}\u0000${generation}\u0000${previousRev ?? ""}\u0000${deleted ? 1 : 0}\u0000${bodyJson}`)
    .digest("hex");
  return `${generation}-${hash}`;
}

/** The generation of `N-hash`, or `undefined` when `rev` is not of that form. */
export function revGeneration(rev: string): number | undefined {
  const match = /^([1-9][0-9]*)-[0-9a-f]+$/.exec(rev);
  if (match === null) return undefined;
  const generation = Number(match[1]);
  return Number.isSafeInteger(generation) ? generation : undefined;
}

/** Stable hex digest of any JSON value (object keys sorted), e.g. a view group signature. */
export function stableDigest(value: unknown): string {
  return createHash("md5").update(stableStringify(value)).digest("hex");
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
