/**
 * Configuration: an INI file (CouchDB's format and keys), merged over the
 * defaults and over by command-line overrides, then decoded as a whole. Every
 * problem is collected and reported at once, each naming its section, key
 * and value, so one run of `upholster run` shows everything to fix.
 */
import { readFile } from "node:fs/promises";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { decodeDbUpdatesConfig } from "../core/db-updates/config.js";
import { decodeSmooshConfig, type SmooshConfig } from "../core/compaction/index.js";
import { decodeIndexingConfig, type IndexingConfig } from "../core/indexing/index.js";
import { formatConfigError, type ConfigError, type IniSections } from "../core/shared/ini.js";
import { mergeIni, parseIniText } from "./ini-file.js";
import { decodeUpholsterSettings, type UpholsterSettings } from "./upholster-section.js";
import { decodeCouchSettings, type CouchSettings } from "./couchdb-section.js";
import { decodeGeoSettings, type GeoSettings } from "./hastings-section.js";
import { unknownKeyWarnings, type ConfigWarning } from "./unknown-keys.js";

/** Everything decoded, plus the raw sections for subsystems that decode their own. */
export interface UpholsterConfig {
  readonly _tag: "UpholsterConfig";
  readonly ini: IniSections;
  readonly smoosh: SmooshConfig;
  readonly upholster: UpholsterSettings;
  /** `[couchdb]`: the server to maintain (url undefined: the in-memory store). */
  readonly couchdb: CouchSettings;
  /** `[ken]`, `[ken.ignore]`, `[fabric] index_updater_*`: background indexing. */
  readonly indexing: IndexingConfig;
  /** `[hastings]`: geo indexes (enabled, index_dir). */
  readonly geo: GeoSettings;
  /** Unknown keys and sections, each once, with the nearest known name: logged at start, never fatal. */
  readonly warnings: readonly ConfigWarning[];
}

/** A config value rejected, or a file that could not be read. */
export type ConfigProblem = ConfigError | { readonly file: string; readonly message: string };

export const formatConfigProblem = (problem: ConfigProblem): string =>
  "file" in problem ? `${problem.file}: ${problem.message}` : formatConfigError(problem);

export const isUpholsterConfig = (value: unknown): value is UpholsterConfig =>
  typeof value === "object" && value !== null && (value as { _tag?: unknown })._tag === "UpholsterConfig";

/** Decode every section upholster knows; all errors, not the first. */
export function decodeConfig(ini: IniSections): Either<ConfigError[], UpholsterConfig> {
  const smoosh = decodeSmooshConfig(ini);
  const upholster = decodeUpholsterSettings(ini);
  const couchdb = decodeCouchSettings(ini);
  // The feed decodes [global_changes] itself (falling back per key, so an
  // embedder's bad key never stops it); at the CLI a bad value is refused like any other.
  const globalChanges = decodeDbUpdatesConfig(ini).errors;
  const indexing = decodeIndexingConfig(ini);
  const geo = decodeGeoSettings(ini);
  const errors = [
    ...(isLeft(smoosh) ? smoosh.left : []),
    ...(isLeft(indexing) ? indexing.left : []),
    ...(isLeft(upholster) ? upholster.left : []),
    ...(isLeft(couchdb) ? couchdb.left : []),
    ...(isLeft(geo) ? geo.left : []),
    ...globalChanges,
  ];
  if (isLeft(smoosh) || isLeft(upholster) || isLeft(couchdb) || isLeft(indexing) || isLeft(geo) || globalChanges.length > 0) return left(errors);
  const warnings = unknownKeyWarnings(ini, smoosh.right);
  return right({ _tag: "UpholsterConfig", ini, smoosh: smoosh.right, upholster: upholster.right, couchdb: couchdb.right, indexing: indexing.right, geo: geo.right, warnings });
}

export interface LoadConfigOptions {
  /** The INI file; absent means defaults (plus overrides). */
  readonly path?: string | undefined;
  /** Applied over the file (command-line flags), as INI strings so they are decoded the same way. */
  readonly overrides?: IniSections;
}

export async function loadConfig(options: LoadConfigOptions = {}): Promise<Either<ConfigProblem[], UpholsterConfig>> {
  let fileSections: IniSections = {};
  const problems: ConfigProblem[] = [];
  if (options.path !== undefined) {
    let text: string;
    try {
      text = await readFile(options.path, "utf8");
    } catch (error) {
      return left([{ file: options.path, message: `cannot read the config file (${error instanceof Error ? error.message : String(error)})` }]);
    }
    const parsed = parseIniText(text);
    fileSections = parsed.sections;
    problems.push(...parsed.errors);
  }
  const decoded = decodeConfig(mergeIni(fileSections, options.overrides ?? {}));
  if (isLeft(decoded)) problems.push(...decoded.left);
  if (problems.length > 0 || isLeft(decoded)) return left(problems);
  return right(decoded.right);
}
