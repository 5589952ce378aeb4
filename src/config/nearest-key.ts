/**
 * "Did you mean wait_secs?": the known key nearest to a typo, by edit
 * distance (Levenshtein: insertions, deletions, substitutions), close enough
 * to be a plausible slip and not just any other key.
 */

/** Edit distance between two short strings (keys): one row of the classic table at a time. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * The nearest candidate, or undefined when none is a plausible slip: within
 * a third of the typo's length (at least 2 edits), or the typo is cut short
 * or run on (`min_prio` -> `min_priority`, the shortest such key first).
 */
export function nearestKey(typo: string, candidates: Iterable<string>): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const key of candidates) {
    const distance = slipDistance(typo, key);
    if (best === undefined || distance < best.distance || (distance === best.distance && key < best.key)) best = { key, distance };
  }
  if (best === undefined) return undefined;
  return best.distance <= Math.max(2, Math.floor(typo.length / 3)) ? best.key : undefined;
}

/** A cut-short or run-on key counts as less than one edit (nearer the closer the lengths); otherwise the edit distance. */
const slipDistance = (typo: string, key: string): number =>
  typo.length >= 3 && (key.startsWith(typo) || typo.startsWith(key)) ? 0.5 + Math.abs(key.length - typo.length) / 1000 : editDistance(typo, key);
