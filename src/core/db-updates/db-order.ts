/**
 * The order of db names the reconciler walks in: CouchDB's `_all_dbs` order.
 *
 * CouchDB lists dbs from its `_dbs` database with raw collation, that is by
 * UTF-8 bytes, which is code point order. JS's `<` compares UTF-16 code units
 * and disagrees for astral characters (surrogates) against U+E000..U+FFFF.
 * The reconciler decides that a db it knows was deleted because the server's
 * sorted page skipped it, so its order must be the server's exactly; every
 * store's paged listing sorts with this comparison.
 */

/** Rank of a UTF-16 code unit in code point order: surrogates (astral code points) come after all of the BMP. */
const rank = (unit: number): number => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit);

/** Negative, zero or positive as `a` sorts before, with or after `b` (UTF-8 byte order). */
export function compareDbNames(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/** `names` sorted in `_all_dbs` order (a new array). */
export const sortDbNames = (names: Iterable<string>): string[] => [...names].sort(compareDbNames);

/** In `sorted` (by `compareDbNames`), the index of the first name after `db` (`sorted.length` if none). */
export function indexAfter(sorted: readonly string[], db: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareDbNames(sorted[mid] as string, db) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
