/**
 * A time-windowed batch of keys, the idea shared by CouchDB's listener and
 * writer: keys collect in a set (repeats collapse) and the whole set is due
 * `delayMs` after the FIRST key arrived in an empty batch (the seed's
 * `last_update_time` is set on the first pending event and cleared on flush).
 * So a key waits at most `delayMs`, and a batch is never released early.
 *
 * The set is a persistent red-black tree so that each step is O(log n)
 * without copying: the core stays pure and still fast under load.
 */
import createRBTree, { type Tree } from "functional-red-black-tree";

export interface Batch {
  readonly keys: Tree<string, true>;
  /** When the first key of this batch arrived; undefined when empty. */
  readonly openedAtMs: number | undefined;
}

export const emptyBatch = (): Batch => ({ keys: createRBTree<string, true>(), openedAtMs: undefined });

export const batchSize = (batch: Batch): number => batch.keys.length;

export const batchHas = (batch: Batch, key: string): boolean => batch.keys.get(key) !== undefined;

/** Adds one key; a repeat is a no-op (collapse). Opens the window if the batch was empty. */
export function addKey(batch: Batch, key: string, nowMs: number): Batch {
  if (batchHas(batch, key)) return batch;
  return { keys: batch.keys.insert(key, true), openedAtMs: batch.openedAtMs ?? nowMs };
}

/** When the batch is due, or undefined when it is empty. */
export const dueAtMs = (batch: Batch, delayMs: number): number | undefined =>
  batch.openedAtMs === undefined ? undefined : batch.openedAtMs + delayMs;

export const isDue = (batch: Batch, delayMs: number, nowMs: number): boolean => {
  const due = dueAtMs(batch, delayMs);
  return due !== undefined && nowMs >= due;
};

/** Every key, sorted (deterministic output for a set). */
export const batchKeys = (batch: Batch): readonly string[] => batch.keys.keys;

/**
 * Merges keys back (a failed write): they keep the batch's window, or open one
 * at `nowMs` when the batch was empty.
 */
export function addKeys(batch: Batch, keys: readonly string[], nowMs: number): Batch {
  let b = batch;
  for (const key of keys) b = addKey(b, key, nowMs);
  return b;
}

/** The first `count` keys in order, without materialising the whole set. */
export function firstKeys(batch: Batch, count: number): readonly string[] {
  const out: string[] = [];
  if (count <= 0) return out;
  batch.keys.forEach((key) => {
    out.push(key);
    return out.length >= count ? true : undefined;
  });
  return out;
}

/** Removes keys (O(k log n)); the window stays as it was. */
export function removeKeys(batch: Batch, keys: readonly string[]): Batch {
  let tree = batch.keys;
  for (const key of keys) tree = tree.remove(key);
  return tree.length === 0 ? emptyBatch() : { keys: tree, openedAtMs: batch.openedAtMs };
}

/** Moves the window start back so that the batch is due no later than `openedAtMs` says. */
export const dueNow = (batch: Batch, openedAtMs: number): Batch =>
  batch.openedAtMs === undefined ? batch : { keys: batch.keys, openedAtMs: Math.min(batch.openedAtMs, openedAtMs) };
