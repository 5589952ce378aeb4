/**
 * Erlang's term order over CouchDB's JSON terms ("raw" collation): numbers <
 * atoms (false < null < true, by name) < objects (`{Props}` tuples) < arrays
 * (lists; the empty one first) < strings (binaries, by UTF-8 bytes).
 *
 * CouchDB uses it where no collator is involved: a view declared with
 * `"options": {"collation": "raw"}`, and the order of the values one
 * document emits under one key (couch_mrview_updater sorts them with
 * `lists:sort/1` before they are stored as duplicates).
 */
import { compareDocIds } from "./collation.js";

const rawRank = (value: unknown): number => {
  if (typeof value === "number") return 0;
  if (value === false) return 1;
  if (value === null || value === undefined) return 2;
  if (value === true) return 3;
  if (typeof value === "string") return 7;
  if (Array.isArray(value)) return value.length === 0 ? 5 : 6;
  return 4;
};

const rawArrays = (a: readonly unknown[], b: readonly unknown[]): number => {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const order = compareRaw(a[i], b[i]);
    if (order !== 0) return order;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
};

/** `{[{K, V}, ...]}`: a one-element tuple holding a list of `{K, V}` pairs, compared pair by pair. */
const rawObjects = (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): number => {
  const namesA = Object.keys(a);
  const namesB = Object.keys(b);
  if (namesA.length === 0 || namesB.length === 0) return namesA.length === namesB.length ? 0 : namesA.length === 0 ? -1 : 1;
  const length = Math.min(namesA.length, namesB.length);
  for (let i = 0; i < length; i++) {
    const byName = compareDocIds(namesA[i]!, namesB[i]!);
    if (byName !== 0) return byName;
    const byValue = compareRaw(a[namesA[i]!], b[namesB[i]!]);
    if (byValue !== 0) return byValue;
  }
  return namesA.length < namesB.length ? -1 : namesA.length > namesB.length ? 1 : 0;
};

/** Erlang's order of two JSON terms: -1, 0 or 1. */
export function compareRaw(a: unknown, b: unknown): number {
  const rankA = rawRank(a);
  const rankB = rawRank(b);
  if (rankA !== rankB) return rankA < rankB ? -1 : 1;
  switch (rankA) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 4:
      return rawObjects(a as Record<string, unknown>, b as Record<string, unknown>);
    case 6:
      return rawArrays(a as unknown[], b as unknown[]);
    case 7:
      return compareDocIds(a as string, b as string);
    default:
      return 0;
  }
}
