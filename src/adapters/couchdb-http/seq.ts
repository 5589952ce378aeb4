/**
 * Update sequences. Clustered CouchDB seqs are opaque strings `N-<base64>`
 * where N is the sum of the shard seqs; shard-level info, CouchDB 1.x and
 * PouchDB Server give plain integers. Only N is ever compared; the opaque
 * string is passed back as `since` untouched.
 */

/** The numeric part of a seq, or `undefined` when it has none. */
export const seqNumber = (seq: string | number): number | undefined => {
  if (typeof seq === "number") return Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
  const match = /^(\d+)(?:-|$)/.exec(seq);
  if (match === null || match[1] === undefined) return undefined;
  const n = Number(match[1]);
  return Number.isSafeInteger(n) ? n : undefined;
};

/** Opaque string form: numbers become their decimal text (what PouchDB Server accepts back as `since`). */
export const seqString = (seq: string | number): string => (typeof seq === "number" ? String(seq) : seq);
