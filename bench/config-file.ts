/**
 * A bench's INI file (CHURN_CONFIG, SIM_CONFIG): the same CouchDB-style file
 * `upholster run --config` reads, decoded whole before any row runs, so a bad
 * file stops the bench at once and the error names each field and its value.
 */
import { isLeft } from "fp-ts/lib/Either.js";
import { readFileSync } from "node:fs";
import { parseIniText } from "../src/config/ini-file.js";
import { decodeConfig, type UpholsterConfig } from "../src/config/load.js";
import { formatConfigWarning } from "../src/config/unknown-keys.js";
import { formatConfigError, type IniSections } from "../src/core/shared/ini.js";

export interface BenchConfig {
  /** The sections as written (what `createUpholster({ config })` takes). */
  readonly ini: IniSections;
  readonly config: UpholsterConfig;
}

/** `undefined` when `path` is unset; throws, naming `variable`, the file and every bad field, when it does not decode. */
export const loadBenchConfig = (variable: string, path: string | undefined): BenchConfig | undefined => {
  if (path === undefined || path === "") return undefined;
  const parsed = parseIniText(readFileSync(path, "utf8"));
  const decoded = decodeConfig(parsed.sections);
  const errors = [...parsed.errors, ...(isLeft(decoded) ? decoded.left : [])];
  if (isLeft(decoded) || errors.length > 0) throw new Error(`${variable} ${path}:\n${errors.map(formatConfigError).join("\n")}`);
  return { ini: parsed.sections, config: decoded.right };
};

/**
 * A line per unknown key, to print before the rows run: a misspelt key decodes
 * (as `upholster run` takes it) but tunes nothing.
 */
export const configWarningLines = (variable: string, loaded: BenchConfig | undefined): string[] =>
  (loaded?.config.warnings ?? []).map((warning) => `${variable}: ${formatConfigWarning(warning)}`);
