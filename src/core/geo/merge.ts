/**
 * The coordinator's merge (hastings_fabric_search): every shard returns its
 * best `limit + skip` hits after its bookmark; all of them are sorted by
 * (distance, id), cut to `limit + skip`, and the first `skip` dropped.
 * Equal keys from different shards (one doc cannot live in two shards, so
 * only in tests) order by shard key, to stay deterministic. Hits carry their
 * shard already, so merging copies nothing.
 */
import { compareHitKeys, type HitKey } from "./order.js";

export interface ShardKeyed extends HitKey {
  readonly shard: string;
}

const byKeyThenShard = (a: ShardKeyed, b: ShardKeyed): number => compareHitKeys(a, b) || (a.shard < b.shard ? -1 : a.shard > b.shard ? 1 : 0);

export function mergeShardHits<H extends ShardKeyed>(shards: readonly (readonly H[])[], limit: number, skip: number): H[] {
  const all = shards.length === 1 ? [...shards[0]!] : shards.flat();
  all.sort(byKeyThenShard);
  return all.slice(skip, limit + skip);
}
