/**
 * The `[hastings]` section: geo indexes (`st_indexes`, the `_geo` API).
 *
 *   enabled    true: geo indexes are built in the background and `_geo`
 *              is served; false: neither (hastings' switch of the same name).
 *   index_dir  where geo index files are kept (one directory per db, one file
 *              per index signature), so indexes survive a restart without a
 *              rebuild. Unset: indexes live in memory and are rebuilt after
 *              a restart. `createUpholster({ geo: { indexDir } })` wins over it.
 *
 * As CouchDB does with its own sections, keys upholster does not read are
 * left to the unknown-key warnings, never fatal.
 */
import * as t from "io-ts";
import type { Either } from "fp-ts/lib/Either.js";
import { BooleanFromString, orErrors, readValue, type ConfigError, type IniSections } from "../core/shared/ini.js";

export const HASTINGS_SECTION = "hastings";

export interface GeoSettings {
  readonly enabled: boolean;
  readonly indexDir: string | undefined;
}

export const defaultGeoSettings: GeoSettings = { enabled: true, indexDir: undefined };

const DirFromString = new t.Type<string, string, unknown>(
  "a directory path",
  (u): u is string => typeof u === "string",
  (u, c) => (typeof u === "string" && u.trim() !== "" ? t.success(u.trim()) : t.failure(u, c)),
  String,
);

export function decodeGeoSettings(ini: IniSections): Either<ConfigError[], GeoSettings> {
  const errors: ConfigError[] = [];
  const s = HASTINGS_SECTION;
  const d = defaultGeoSettings;
  const settings: GeoSettings = {
    enabled: readValue(ini, s, "enabled", BooleanFromString, d.enabled, errors),
    indexDir: readValue<string | undefined>(ini, s, "index_dir", DirFromString, d.indexDir, errors),
  };
  return orErrors(errors, settings);
}
