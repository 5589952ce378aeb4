/**
 * CouchDB's own background daemons, read from each node's config.
 *
 * A CouchDB 3.x node runs its smoosh (auto-compaction) and ken (background
 * indexing) unless told not to: stock sections are empty and the defaults
 * compiled in (fixtures 07 and 08). Left on beside upholster, two daemons
 * compact and index the same dbs, each within its own limits, so the server
 * sees both. CouchDB says nothing about it, so upholster asks and says so.
 *
 * What counts, as CouchDB 3.4.3 reads it:
 * - smoosh runs a channel whose `[smoosh.<channel>] concurrency` is above 0
 *   (default 1). Its channels are the built-in ones merged with
 *   `[smoosh] db_channels`, `view_channels` and `cleanup_channels`
 *   (smoosh_utils:channel_list: since 3.3 listing fewer switches none off).
 * - ken starts jobs while `[ken] batch_channels` + `incremental_channels`
 *   (20 and 80) is above 0.
 * - `[chttpd] max_db_number_for_dbs_info_req` (100): the most dbs one
 *   `POST /_dbs_info` may name. Read here, the store packs its batches to it
 *   without a refusal to learn it from (dbs-info-limit.ts).
 *
 * Requests: `GET /_membership`, then per node its `smoosh`, `ken` and
 * `chttpd` sections and one per smoosh channel (about ten a node), when
 * server-daemons-watch.ts asks (at start, every ten minutes, and on a
 * status read a minute after the last read). Sections only,
 * never the whole config (it holds the admins' password hashes). Needs a
 * server admin (401 otherwise): then the answer is "unknown", with why.
 */
import * as t from "io-ts";
import type { CouchClient } from "./client.js";
import { decodeBody, Membership } from "./decoders.js";
import { CouchDecodeError, CouchHttpError } from "./errors.js";
import { DEFAULT_CLEANUP_CHANNELS, DEFAULT_DB_CHANNELS, DEFAULT_VIEW_CHANNELS } from "../../core/compaction/config.js";
import { defaultIndexingConfig } from "../../core/indexing/index.js";
import { DEFAULT_DBS_PER_INFO_REQUEST } from "../../core/shared/dbs-info.js";

/** CouchDB 3.4.3's built-in channels (smoosh_utils), the same as upholster's default lists. */
const BUILT_IN_CHANNELS = { db_channels: DEFAULT_DB_CHANNELS, view_channels: DEFAULT_VIEW_CHANNELS, cleanup_channels: DEFAULT_CLEANUP_CHANNELS };
const DEFAULT_CONCURRENCY = "1";

/** `GET /_node/{node}/_config/{section}`: every value is a string; an unset section is `{}`. */
export const ConfigSection = t.record(t.string, t.string, "ConfigSection");
export type ConfigSection = t.TypeOf<typeof ConfigSection>;

/** A smoosh channel that runs: its name and its `concurrency` as configured (one that is no integer counts as running). */
export interface RunningChannel {
  readonly channel: string;
  readonly concurrency: string;
}

export interface NodeDaemons {
  readonly node: string;
  /** Channels CouchDB's smoosh runs on this node (concurrency above 0), by name. */
  readonly smooshChannels: readonly RunningChannel[];
  /** ken's `batch_channels` and `incremental_channels` as configured (defaults filled in). */
  readonly ken: { readonly batchChannels: string; readonly incrementalChannels: string };
  readonly kenRuns: boolean;
  /** `[chttpd] max_db_number_for_dbs_info_req` (CouchDB's default 100 when unset; `undefined` when not an integer). */
  readonly dbsInfoMaxKeys: number | undefined;
}

export type ServerDaemons =
  | { readonly state: "known"; readonly nodes: readonly NodeDaemons[] }
  | { readonly state: "unknown"; readonly reason: string };

/** CouchDB's smoosh_utils:split: comma separated, blanks around commas dropped, empty means none. */
const splitChannels = (csv: string | undefined): string[] =>
  csv === undefined || csv.trim() === "" ? [] : csv.trim().split(/\s*,\s*/).filter((name) => name !== "");

/** Every channel smoosh runs with this `[smoosh]` section: the built-in ones and the configured ones, sorted (lists:usort). */
export const smooshChannelNames = (smoosh: ConfigSection): string[] => {
  const names = new Set<string>();
  for (const [key, builtIn] of Object.entries(BUILT_IN_CHANNELS)) {
    for (const name of [...builtIn, ...splitChannels(smoosh[key])]) names.add(name);
  }
  return [...names].sort();
};

/** `list_to_integer`: an optional sign and digits, nothing else. */
const erlangInteger = (text: string): number | undefined => (/^[+-]?[0-9]+$/.test(text) ? Number(text) : undefined);

/**
 * Whether a channel with this `concurrency` runs: a positive integer, or no
 * integer at all (CouchDB's `list_to_integer` fails on it; we do not guess
 * it off). 0 or less: smoosh_channel never starts a job (running >= concurrency).
 */
export const channelRuns = (concurrency: string): boolean => {
  const n = erlangInteger(concurrency);
  return n === undefined || n > 0;
};

/** ken's two channel counts as configured, CouchDB's defaults (ken's, and upholster's: 20 and 80) filled in. */
const kenChannelsOf = (ken: ConfigSection): NodeDaemons["ken"] => ({
  batchChannels: ken["batch_channels"] ?? String(defaultIndexingConfig.batchChannels),
  incrementalChannels: ken["incremental_channels"] ?? String(defaultIndexingConfig.incrementalChannels),
});

/** ken starts jobs while its channels add up to more than 0; a value that is not an integer counts as running. */
const kenChannelsRun = (channels: NodeDaemons["ken"]): boolean => {
  const batch = erlangInteger(channels.batchChannels);
  const incremental = erlangInteger(channels.incrementalChannels);
  return batch === undefined || incremental === undefined || batch + incremental > 0;
};

/** Whether ken runs with this `[ken]` section (`kenChannelsRun` over it, defaults filled in). */
export const kenRuns = (ken: ConfigSection): boolean => kenChannelsRun(kenChannelsOf(ken));

/** `[chttpd] max_db_number_for_dbs_info_req`: CouchDB's default when unset; `undefined` when it is no integer. */
export const dbsInfoMaxKeysOf = (chttpd: ConfigSection): number | undefined => {
  const value = chttpd["max_db_number_for_dbs_info_req"];
  return value === undefined ? DEFAULT_DBS_PER_INFO_REQUEST : erlangInteger(value.trim());
};

/** One node's daemons from its sections (`channels`: each smoosh channel's section, by name). */
export const nodeDaemonsOf = (node: string, sections: { smoosh: ConfigSection; ken: ConfigSection; chttpd: ConfigSection; channels: ReadonlyMap<string, ConfigSection> }): NodeDaemons => {
  const smooshChannels: RunningChannel[] = [];
  for (const [channel, section] of sections.channels) {
    const concurrency = section["concurrency"] ?? DEFAULT_CONCURRENCY;
    if (channelRuns(concurrency)) smooshChannels.push({ channel, concurrency });
  }
  const ken = kenChannelsOf(sections.ken);
  return {
    node,
    smooshChannels,
    ken,
    kenRuns: kenChannelsRun(ken),
    dbsInfoMaxKeys: dbsInfoMaxKeysOf(sections.chttpd),
  };
};

const configSectionPath = (node: string, section: string): string => `/_node/${encodeURIComponent(node)}/_config/${encodeURIComponent(section)}`;

const readSection = async (client: CouchClient, node: string, section: string): Promise<ConfigSection> => {
  const path = configSectionPath(node, section);
  return decodeBody(ConfigSection, (await client.call({ method: "GET", path })).body, `GET ${path}`);
};

/**
 * Reads every node's daemons. An unreachable server rejects (asked again
 * later); a refusal (not an admin, no `/_membership`) or a body of another
 * shape is an "unknown" answer, with why.
 */
export const readServerDaemons = async (client: CouchClient): Promise<ServerDaemons> => {
  try {
    const membership = decodeBody(Membership, (await client.call({ method: "GET", path: "/_membership" })).body, "GET /_membership");
    const nodes: NodeDaemons[] = [];
    for (const node of membership.all_nodes) {
      const smoosh = await readSection(client, node, "smoosh");
      const channels = new Map<string, ConfigSection>();
      for (const channel of smooshChannelNames(smoosh)) channels.set(channel, await readSection(client, node, `smoosh.${channel}`));
      const ken = await readSection(client, node, "ken");
      const chttpd = await readSection(client, node, "chttpd");
      nodes.push(nodeDaemonsOf(node, { smoosh, ken, chttpd, channels }));
    }
    return { state: "known", nodes };
  } catch (error) {
    if (error instanceof CouchHttpError && error.status >= 400 && error.status < 500) return { state: "unknown", reason: error.message };
    if (error instanceof CouchDecodeError) return { state: "unknown", reason: error.message };
    throw error;
  }
};

/** The smallest `_dbs_info` limit over the nodes (a request may land on any of them), if every node's is known. */
export const serverDbsInfoMaxKeys = (daemons: ServerDaemons): number | undefined => {
  if (daemons.state !== "known" || daemons.nodes.length === 0) return undefined;
  const limits = daemons.nodes.map((n) => n.dbsInfoMaxKeys);
  return limits.every((limit): limit is number => limit !== undefined) ? Math.min(...limits) : undefined;
};

/** The log line for a node whose smoosh runs: which channels, and how to switch them off. */
export const smooshWarning = (node: NodeDaemons): string =>
  `CouchDB's own smoosh runs on ${node.node} (channels ${node.smooshChannels.map((c) => `${c.channel} concurrency ${c.concurrency}`).join(", ")}): ` +
  "it compacts the same databases and views as upholster, each daemon within its own limits. Switch it off: `concurrency = 0` in each channel's " +
  "[smoosh.<channel>] section of CouchDB's local.ini (at runtime: PUT /_node/_local/_config/smoosh.<channel>/concurrency with the body \"0\")";

/** The log line for a node whose ken runs. */
export const kenWarning = (node: NodeDaemons): string =>
  `CouchDB's own ken runs on ${node.node} (batch_channels ${node.ken.batchChannels}, incremental_channels ${node.ken.incrementalChannels}): ` +
  "it builds the same indexes as upholster's indexing. Switch it off: [ken] batch_channels = 0 and incremental_channels = 0 in CouchDB's local.ini";
