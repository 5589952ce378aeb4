/**
 * How upholster's knowledge of the server's dbs is persisted: split by a hash
 * of the db name into a fixed number of shards, one StatePort key each, so a
 * change rewrites one shard (about 1/64 of 100,000 dbs), not everything.
 * The reconcile state itself (pass cursor, uncertain dbs) is one small key.
 * Everything loaded is decoded here; a shard that does not decode is dropped
 * (its dbs look unknown: a later pass states them again, a repeat not a loss).
 */
import * as t from "io-ts";
import { PersistedPass } from "./reconcile-pass.js";

export const KNOWN_SHARD_COUNT = 64;
export const knownShardKey = (shard: number): string => `db-updates.known.${shard}`;
export const RECONCILE_STATE_KEY = "db-updates.reconcile";

/** FNV-1a over UTF-16 code units: stable across processes and versions (the shard of a name must not move). */
export function knownShardOf(db: string, shards = KNOWN_SHARD_COUNT): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < db.length; i++) {
    hash ^= db.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/** One shard: live db -> the seq mark its feed rows cover. */
export const KnownShard = t.record(t.string, t.union([t.number, t.string]), "KnownShard");
export type KnownShard = t.TypeOf<typeof KnownShard>;

export const ReconcileState = t.intersection(
  [
    t.type({ pass: PersistedPass }),
    // Dbs whose created/deleted row was being written: their liveness is not known for sure.
    t.partial({ uncertain: t.array(t.string) }),
  ],
  "ReconcileState",
);
export type ReconcileState = t.TypeOf<typeof ReconcileState>;
