/**
 * What the reconciler remembers of a db's update seq, and when it "moved".
 *
 * Clustered CouchDB seqs are opaque (`N-g1AAAA...`, often 200+ characters)
 * where N is the sum of the shard seqs; the opaque part can differ between two
 * reads of the same state (another replica answered), so comparing strings
 * would report phantom updates. We keep and compare only N; a store whose seqs
 * have no numeric prefix is compared by the whole string. Storing N also keeps
 * 100,000 remembered dbs small. Blind spot, documented: a db deleted,
 * re-created and written back to the very same N while every event about it
 * was lost looks unchanged.
 */

/** The numeric prefix of a seq, or the whole seq when it has none. */
export type SeqMark = number | string;

export function seqMarkOf(seq: string | number): SeqMark {
  if (typeof seq === "number") return Number.isSafeInteger(seq) && seq >= 0 ? seq : String(seq);
  const match = /^(\d+)(?:-|$)/.exec(seq);
  const n = match?.[1] === undefined ? Number.NaN : Number(match[1]);
  return Number.isSafeInteger(n) ? n : seq;
}

/** A db's seq changed since the feed last covered it: it had writes the feed may not have said. */
export const seqMoved = (known: SeqMark, now: SeqMark): boolean => known !== now;

/** A db that was never written is at seq 0 (CouchDB `0-g1AAA...`, other stores `0`). */
export const SEQ_NEVER_WRITTEN: SeqMark = 0;
