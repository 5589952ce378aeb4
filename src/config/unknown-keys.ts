/**
 * Warnings for configuration that would otherwise pass silently: an unknown
 * key (`[smoosh] wait_sec`), an unknown section (`[frobnicate]`), a channel
 * section no channel list names (`[smoosh.ratio_db]`). Each names what it
 * found and the nearest known name. Warnings, not errors: CouchDB ignores
 * unknown keys too, and a config written for a newer upholster should still
 * start. (`[upholster]` is ours; its unknown keys are errors, see
 * upholster-section.ts.)
 */
import type { SmooshConfig } from "../core/compaction/index.js";
import type { IniSections } from "../core/shared/ini.js";
import { CHANNEL_SECTION_PREFIX, KNOWN_SECTIONS, type KnownSections } from "./known-sections.js";
import { nearestKey } from "./nearest-key.js";

export interface ConfigWarning {
  readonly section: string;
  /** Absent when the whole section is unknown. */
  readonly key?: string;
  /** The nearest known key (or section), when one is close. */
  readonly suggestion?: string;
  readonly message: string;
}

export const formatConfigWarning = (w: ConfigWarning): string =>
  `${w.key === undefined ? `[${w.section}]` : `[${w.section}] ${w.key}`}: ${w.message}`;

/** `smoosh`: the decoded channel lists, to tell a configured channel's section from a stray one. */
export function unknownKeyWarnings(ini: IniSections, smoosh?: SmooshConfig, known: KnownSections = KNOWN_SECTIONS): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  for (const [section, values] of Object.entries(ini)) {
    const keys = known.keysOf(section);
    if (keys === undefined) {
      warnings.push(unknownSection(section, known));
      continue;
    }
    if (section.startsWith(CHANNEL_SECTION_PREFIX) && keys !== "any" && smoosh !== undefined && !(section.slice(CHANNEL_SECTION_PREFIX.length) in smoosh.channels)) {
      warnings.push(unlistedChannel(section, smoosh));
    }
    if (keys === "any" || known.isStrict(section)) continue;
    for (const key of Object.keys(values)) if (!keys.has(key)) warnings.push(unknownKey(section, key, keys));
  }
  return warnings;
}

function unknownSection(section: string, known: KnownSections): ConfigWarning {
  const suggestion = nearestKey(section, known.names());
  const hint = suggestion === undefined ? "" : ` (did you mean [${suggestion}]?)`;
  return { section, ...(suggestion !== undefined ? { suggestion } : {}), message: `unknown section${hint}; it is ignored` };
}

function unknownKey(section: string, key: string, keys: ReadonlySet<string>): ConfigWarning {
  const suggestion = nearestKey(key, keys);
  const hint = suggestion === undefined ? "" : ` (did you mean ${suggestion}?)`;
  return { section, key, ...(suggestion !== undefined ? { suggestion } : {}), message: `unknown key${hint}; it is ignored` };
}

function unlistedChannel(section: string, smoosh: SmooshConfig): ConfigWarning {
  const channel = section.slice(CHANNEL_SECTION_PREFIX.length);
  const suggestion = nearestKey(channel, Object.keys(smoosh.channels));
  const hint = suggestion === undefined ? "" : ` (did you mean [${CHANNEL_SECTION_PREFIX}${suggestion}]?)`;
  return {
    section,
    ...(suggestion !== undefined ? { suggestion: `${CHANNEL_SECTION_PREFIX}${suggestion}` } : {}),
    message: `no channel list (db_channels, view_channels, cleanup_channels) names ${JSON.stringify(channel)}${hint}; it is ignored`,
  };
}
