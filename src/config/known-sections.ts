/**
 * Every configuration section upholster knows, and the keys each accepts:
 * the registry behind the unknown-key warnings (unknown-keys.ts).
 *
 * A subsystem's sections are known by their decoder (keys-read.ts): adding
 * one is a line in `DECODED`, e.g. `decodedBy(decodeKenConfig)`. CouchDB's own
 * sections (couchdb-sections.ts) are known and quiet; where upholster reads
 * a CouchDB section too (`[couchdb]`, `[smoosh]`, `[global_changes]`), CouchDB's
 * keys there are known as well.
 */
import { decodeSmooshConfig } from "../core/compaction/index.js";
import { decodeDbUpdatesConfig } from "../core/db-updates/config.js";
import { decodeIndexingConfig } from "../core/indexing/index.js";
import type { IniSections } from "../core/shared/ini.js";
import { decodeCouchSettings } from "./couchdb-section.js";
import { decodeGeoSettings } from "./hastings-section.js";
import { COUCHDB_KEYS, COUCHDB_ONLY_SECTIONS, COUCHDB_SECTION_PATTERNS } from "./couchdb-sections.js";
import { keysReadBy, type KeysBySection } from "./keys-read.js";
import { decodeUpholsterSettings, UPHOLSTER_SECTION } from "./upholster-section.js";

/** `any`: every key is fine (lists keyed by db or user name, and CouchDB's sections upholster does not read). */
export type SectionKeys = ReadonlySet<string> | "any";

export interface KnownSections {
  /** The keys a section accepts; undefined when the section is unknown. */
  keysOf(section: string): SectionKeys | undefined;
  /** Sections whose unknown keys the decoder already refuses as errors (no warning on top). */
  isStrict(section: string): boolean;
  /** Every known section name, for "did you mean". */
  names(): readonly string[];
}

export const CHANNEL_SECTION_PREFIX = "smoosh.";

/** A channel name no one would configure, to find the keys every `[smoosh.<channel>]` is read for. */
const PROBE_CHANNEL = "upholster_probe_channel";

const decodedBy = (decode: (ini: IniSections) => unknown, ini: IniSections = {}): KeysBySection => keysReadBy(decode, ini);

/** Upholster's sections, as their decoders read them. One line per decoder. */
const DECODED: readonly KeysBySection[] = [
  decodedBy(decodeSmooshConfig), // [smoosh] and the built-in channels' sections
  decodedBy((ini) => decodeDbUpdatesConfig(ini)), // [global_changes]
  decodedBy(decodeUpholsterSettings), // [upholster]
  decodedBy(decodeCouchSettings), // [couchdb]
  decodedBy(decodeIndexingConfig), // [ken], [fabric] index_updater_*
  decodedBy(decodeGeoSettings), // [hastings]
];

/** `[smoosh.<channel>]` for any channel name: the keys a configured channel is read for. */
const CHANNEL_KEYS: ReadonlySet<string> =
  keysReadBy(decodeSmooshConfig, { smoosh: { db_channels: PROBE_CHANNEL } }).get(`${CHANNEL_SECTION_PREFIX}${PROBE_CHANNEL}`) ?? new Set();

/**
 * Sections whose keys are names (of dbs, of users): any key. And `[hastings]`:
 * upholster reads two keys there, but Cloudant's own hastings keys are not
 * documented anywhere, so an ini that carries them stays quiet. And
 * `[chttpd]`: upholster reads one key there, but CouchDB reads dozens, many
 * only in code (some through `[httpd]`), so a CouchDB local.ini stays quiet.
 */
const ANY_KEY_SECTIONS = ["smoosh.ignore", "admins", "ken.ignore", "query_servers", "native_query_servers", "hastings", "chttpd"];

/** Sections a subsystem will decode soon; quiet until it registers its keys in `DECODED`. */
const COMING_SECTIONS: readonly string[] = [];

export function createKnownSections(decoded: readonly KeysBySection[] = DECODED): KnownSections {
  const keyed = new Map<string, Set<string>>();
  for (const sections of decoded) {
    for (const [section, keys] of sections) keyed.set(section, new Set([...(keyed.get(section) ?? []), ...keys, ...(COUCHDB_KEYS[section] ?? [])]));
  }
  const quiet = new Set([...COUCHDB_ONLY_SECTIONS, ...COMING_SECTIONS]);
  const isQuiet = (section: string) => quiet.has(section) || COUCHDB_SECTION_PATTERNS.some((pattern) => pattern.test(section));
  const couchKeys = (section: string) => (COUCHDB_KEYS[section] === undefined ? undefined : new Set(COUCHDB_KEYS[section]));

  return {
    keysOf(section) {
      if (ANY_KEY_SECTIONS.includes(section)) return "any";
      // Built-in channels too: `priority` is known there (CouchDB lists it), if fixed by the name.
      if (section.startsWith(CHANNEL_SECTION_PREFIX)) return CHANNEL_KEYS;
      // A decoded section is checked, even one that was only CouchDB's until a subsystem registered it.
      return keyed.get(section) ?? (isQuiet(section) ? "any" : couchKeys(section));
    },
    isStrict: (section) => section === UPHOLSTER_SECTION,
    names: () => [...new Set([...keyed.keys(), ...Object.keys(COUCHDB_KEYS), ...ANY_KEY_SECTIONS, ...quiet])],
  };
}

export const KNOWN_SECTIONS: KnownSections = createKnownSections();
