/**
 * CouchDB's view collation (couch_ejson_compare): null < false < true <
 * numbers < strings < arrays < objects. Strings compare with the ICU root
 * collator at its default (tertiary) strength, as CouchDB's NIF does with
 * `ucol_open("")`: "a" < "A" < "aa", "c" equals "c\u200B" (U+200B is
 * ignorable), precomposed "é" equals "e\u0301". Arrays compare element by
 * element, a prefix first; objects member by member in their order (name by
 * ICU, then value), a subset first.
 *
 * Node's ICU stands in for CouchDB's: CLDR's "en" collation is the root
 * collation. (`Intl.Collator("und")` would not do: V8 resolves "und" to the
 * process's default locale, so a Swedish machine would sort "ä" after "z".)
 * Checked against a real CouchDB 3.4.3: test/fixtures/couchdb-3.4.3-views.
 *
 * Doc ids, which break ties between equal keys, compare as CouchDB's Erlang
 * binaries do: by UTF-8 bytes, that is by code point.
 */

const icu = new Intl.Collator("en", { usage: "sort", sensitivity: "variant", ignorePunctuation: false, numeric: false, caseFirst: "false" });

/** Type ranks in collation order. */
const Rank = { Null: 0, False: 1, True: 2, Number: 3, String: 4, Array: 5, Object: 6 } as const;
type Rank = (typeof Rank)[keyof typeof Rank];

const rankOf = (value: unknown): Rank => {
  switch (typeof value) {
    case "number":
      return Rank.Number;
    case "string":
      return Rank.String;
    case "boolean":
      return value ? Rank.True : Rank.False;
    case "object":
      if (value === null) return Rank.Null;
      return Array.isArray(value) ? Rank.Array : Rank.Object;
    default:
      // Not JSON (undefined, functions): where JSON would have put null.
      return Rank.Null;
  }
};

/** Sign of a comparison: -1, 0 or 1 (the comparators below return only these). */
const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

/**
 * True for a character whose ICU root order among the others of this set is
 * its code point order, with one primary weight each and no case or accent:
 * space - . / 0-9 a-z. Strings made only of these compare in ICU as they do
 * code unit by code unit, so the common keys (ids, lowercase words, numbers
 * as text) skip the collator, which costs ~0.2 µs a call.
 */
const isPlainCode = (code: number): boolean =>
  (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x20 || code === 0x2d || code === 0x2e || code === 0x2f;

/** ICU root collation of two strings. */
export const compareStrings = (a: string, b: string): number => {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  let i = 0;
  for (; i < length; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (!isPlainCode(ca) || !isPlainCode(cb)) return sign(icu.compare(a, b));
    if (ca !== cb) break;
  }
  // Decided only if both strings are plain to the end: later characters could outweigh this one otherwise.
  for (let j = i; j < a.length; j++) if (!isPlainCode(a.charCodeAt(j))) return sign(icu.compare(a, b));
  for (let j = i; j < b.length; j++) if (!isPlainCode(b.charCodeAt(j))) return sign(icu.compare(a, b));
  if (i === length) return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
  return a.charCodeAt(i) < b.charCodeAt(i) ? -1 : 1;
};

const compareArrays = (a: readonly unknown[], b: readonly unknown[]): number => {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const order = compareViewKeys(a[i], b[i]);
    if (order !== 0) return order;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
};

const compareObjects = (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): number => {
  const namesA = Object.keys(a);
  const namesB = Object.keys(b);
  const length = Math.min(namesA.length, namesB.length);
  for (let i = 0; i < length; i++) {
    const nameA = namesA[i]!;
    const nameB = namesB[i]!;
    const byName = compareStrings(nameA, nameB);
    if (byName !== 0) return byName;
    const byValue = compareViewKeys(a[nameA], b[nameB]);
    if (byValue !== 0) return byValue;
  }
  return namesA.length < namesB.length ? -1 : namesA.length > namesB.length ? 1 : 0;
};

/** CouchDB's collation of two JSON values: -1, 0 (equal for views: same rows, one group) or 1. */
export function compareViewKeys(a: unknown, b: unknown): number {
  // The common cases first: keys of one view are mostly of one type.
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
  const rankA = rankOf(a);
  const rankB = rankOf(b);
  if (rankA !== rankB) return rankA < rankB ? -1 : 1;
  switch (rankA) {
    case Rank.Number:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case Rank.String:
      return compareStrings(a as string, b as string);
    case Rank.Array:
      return compareArrays(a as unknown[], b as unknown[]);
    case Rank.Object:
      return compareObjects(a as Record<string, unknown>, b as Record<string, unknown>);
    default:
      return 0;
  }
}

/**
 * Doc ids by UTF-8 bytes (Erlang binary order), which is code point order.
 * JavaScript's `<` compares UTF-16 code units instead, which differs only
 * where a surrogate (U+10000 and up) meets U+E000..U+FFFF.
 */
export const compareDocIds = (a: string, b: string): number => {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    if (ca >= 0xd800 && cb >= 0xd800) return codePointRank(ca) < codePointRank(cb) ? -1 : 1;
    return ca < cb ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
};

/** Surrogates (0xD800..0xDFFF) stand for code points above every BMP unit. */
const codePointRank = (unit: number): number => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x10000 : unit);
