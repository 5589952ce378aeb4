/**
 * `GeoIndexFiles` kept in memory over the real geo engine (`GeoIndex`), for
 * tests of the compaction daemon while the runtime's geo manager
 * (src/runtime/geo) is not wired: one GeoIndex per (db, signature); its
 * `sizes()` are the file the daemon sees (an append-only log model: every
 * change appends, so rewrites leave garbage) and `compact()` rewrites it.
 *
 * As the port asks: `apply` announces growth to every listener after an
 * update; a compaction runs once at a time per file (a second `compact`
 * while one runs gets the same handle), after yielding once, so callers see
 * `compactionRunning` in between; its `done` never rejects.
 */
import { GeoIndex } from "../../src/adapters/geo/index.js";
import type { GeoIndexFile, GeoIndexFiles } from "../../src/ports/geo.js";
import type { Timers } from "../../src/ports/shell.js";
import type { DbName, DesignDocId, JobHandle, JobOutcome } from "../../src/ports/store.js";

/** One document's change: its geometries (what its index function passed to `st_index`), or its deletion. */
export type GeoDocChange =
  | { readonly id: string; readonly rev: string; readonly geometries: readonly unknown[] }
  | { readonly id: string; readonly deleted: true };

export interface AppliedChanges {
  readonly indexed: number;
  /** Docs whose geometry the engine refused, with its reason (they left the index). */
  readonly refused: readonly { readonly id: string; readonly reason: string }[];
}

export interface MemoryGeoFiles extends GeoIndexFiles {
  /** Create the index file of `signature` in `db` (used by `ddocs`), or return the existing one. */
  define(db: DbName, signature: string, ddocs: readonly DesignDocId[]): GeoIndex;
  /** Apply one batch of changes reaching `updateSeq`, then announce the growth. */
  apply(db: DbName, signature: string, changes: readonly GeoDocChange[], updateSeq: number): AppliedChanges;
  /** Delete the file (a running compaction still ends, then finds it gone). */
  remove(db: DbName, signature: string): boolean;
  /** Growth listeners subscribed now. */
  listenerCount(): number;
}

interface Entry {
  readonly index: GeoIndex;
  readonly ddocs: readonly DesignDocId[];
  updateSeq: number;
  compaction: JobHandle | undefined;
}

export interface MemoryGeoFilesOptions {
  /** Where a compaction waits its turn (a virtual clock in tests); by default a microtask. */
  readonly timers?: Timers;
}

const keyOf = (db: DbName, signature: string): string => `${db}\u0000${signature}`;

export function createMemoryGeoFiles(options: MemoryGeoFilesOptions = {}): MemoryGeoFiles {
  const entries = new Map<string, Entry & { readonly db: DbName; readonly signature: string }>();
  const listeners = new Set<(db: DbName, signature: string) => void>();
  const later = (fn: () => void): void => {
    if (options.timers === undefined) queueMicrotask(fn);
    else options.timers.setTimeout(fn, 0);
  };

  const describe = (e: Entry & { db: DbName; signature: string }): GeoIndexFile => {
    const sizes = e.index.sizes();
    return {
      db: e.db,
      signature: e.signature,
      ddocs: [...e.ddocs].sort(),
      fileBytes: sizes.fileBytes,
      activeBytes: sizes.dataBytes,
      updateSeq: e.updateSeq,
      compactionRunning: e.compaction !== undefined,
    };
  };

  const announce = (db: DbName, signature: string): void => {
    for (const listener of [...listeners]) {
      // One listener's failure must not cost the others their notice, nor fail the update.
      try {
        listener(db, signature);
      } catch {
        /* the listener's own concern */
      }
    }
  };

  const startCompaction = (entry: Entry & { db: DbName; signature: string }): JobHandle => {
    let finish: (outcome: JobOutcome) => void = () => undefined;
    const done = new Promise<JobOutcome>((resolve) => (finish = resolve));
    const handle: JobHandle = { done };
    entry.compaction = handle;
    later(() => {
      entry.compaction = undefined;
      if (entries.get(keyOf(entry.db, entry.signature)) !== entry) return finish({ ok: false, reason: "the geo index was deleted" });
      const before = entry.index.sizes().fileBytes;
      entry.index.compact();
      finish({ ok: true, reclaimedBytes: Math.max(0, before - entry.index.sizes().fileBytes) });
    });
    return handle;
  };

  return {
    define(db, signature, ddocs) {
      const existing = entries.get(keyOf(db, signature));
      if (existing !== undefined) return existing.index;
      const entry = { db, signature, index: new GeoIndex(), ddocs: [...ddocs], updateSeq: 0, compaction: undefined };
      entries.set(keyOf(db, signature), entry);
      return entry.index;
    },
    apply(db, signature, changes, updateSeq) {
      const entry = entries.get(keyOf(db, signature));
      if (entry === undefined) throw new Error(`geo index ${signature} of ${db} does not exist`);
      const refused: { id: string; reason: string }[] = [];
      let indexed = 0;
      for (const change of changes) {
        if ("deleted" in change) {
          entry.index.remove(change.id);
          continue;
        }
        const result = entry.index.upsert(change.id, change.rev, change.geometries);
        if (result._tag === "Left") refused.push({ id: change.id, reason: result.left });
        else indexed += 1;
      }
      entry.updateSeq = Math.max(entry.updateSeq, updateSeq);
      announce(db, signature);
      return { indexed, refused };
    },
    remove: (db, signature) => entries.delete(keyOf(db, signature)),
    listenerCount: () => listeners.size,
    files: async (db) => [...entries.values()].filter((e) => e.db === db).map(describe),
    file: async (db, signature) => {
      const entry = entries.get(keyOf(db, signature));
      return entry === undefined ? undefined : describe(entry);
    },
    compact: async (db, signature) => {
      const entry = entries.get(keyOf(db, signature));
      if (entry === undefined) throw new Error(`geo index ${signature} of ${db} does not exist`);
      return entry.compaction ?? startCompaction(entry);
    },
    onGrowth(listener) {
      // A wrapper per subscription: the same function subscribed twice is two subscriptions.
      const subscription = (db: DbName, signature: string): void => listener(db, signature);
      listeners.add(subscription);
      return () => {
        listeners.delete(subscription);
      };
    },
  };
}
