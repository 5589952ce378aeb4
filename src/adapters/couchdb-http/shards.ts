/**
 * Shard granularity, as CouchDB's own smoosh works: each shard file of each
 * node is its own compaction object. Object names are `<shard>@<node>`, e.g.
 * `shards/00000000-7fffffff/fx_db.1795281095@couchdb@127.0.0.1` (shard names
 * never contain `@`, so the first `@` splits). Shard names come only from
 * `/_node/{node}/_all_dbs` (fixture 32); `/{db}/_shards` gives ranges only.
 */
import { decodeBody, DbNames, Membership } from "./decoders.js";
import type { CouchClient } from "./client.js";

export interface ShardRef {
  readonly shard: string;
  readonly node: string;
}

const shardPattern = /^shards\/[0-9a-f]{8}-[0-9a-f]{8}\/(.+)\.[0-9]+$/;

/** `shards/00000000-7fffffff/fx_db.1795281095` -> `fx_db`; `undefined` for a non-shard name. */
export const clusteredNameOf = (shard: string): string | undefined => shardPattern.exec(shard)?.[1];

export const shardObjectName = (ref: ShardRef): string => `${ref.shard}@${ref.node}`;

export const parseShardObjectName = (name: string): ShardRef | undefined => {
  const at = name.indexOf("@");
  if (at <= 0) return undefined;
  const shard = name.slice(0, at);
  const node = name.slice(at + 1);
  return clusteredNameOf(shard) === undefined || node === "" ? undefined : { shard, node };
};

/** The db a compaction object belongs to: the clustered name of a shard object, or the name itself. */
export const clusteredDbOf = (name: string): string => {
  const ref = parseShardObjectName(name);
  return ref === undefined ? name : (clusteredNameOf(ref.shard) ?? name);
};

/** `/_node/{node}/{url-encoded shard}` */
export const shardPath = (ref: ShardRef): string => `/_node/${encodeURIComponent(ref.node)}/${encodeURIComponent(ref.shard)}`;

/** Every shard of every node in `/_membership`, with a map from clustered db name to its shard objects. */
export const listShards = async (client: CouchClient): Promise<{ names: string[]; byDb: Map<string, string[]> }> => {
  const membership = decodeBody(Membership, (await client.call({ method: "GET", path: "/_membership" })).body, "GET /_membership");
  const names: string[] = [];
  const byDb = new Map<string, string[]>();
  for (const node of membership.all_nodes) {
    const endpoint = `GET /_node/${node}/_all_dbs`;
    const files = decodeBody(DbNames, (await client.call({ method: "GET", path: `/_node/${encodeURIComponent(node)}/_all_dbs` })).body, endpoint);
    for (const shard of files) {
      const db = clusteredNameOf(shard);
      if (db === undefined) continue; // node-local dbs (_dbs, _nodes, _users copies) are not shards
      const name = shardObjectName({ shard, node });
      names.push(name);
      const list = byDb.get(db) ?? [];
      list.push(name);
      byDb.set(db, list);
    }
  }
  return { names, byDb };
};
