/**
 * INI text -> IniSections, with the `ini` package.
 *
 * Two things `ini` does that CouchDB's config does not: it nests dotted
 * section names (`[smoosh.ratio_dbs]` becomes `smoosh -> ratio_dbs`, which
 * would collide with a key `ratio_dbs` of `[smoosh]`) and it turns
 * `true`/`false`/`null` into JSON values. Dots in section headers are escaped
 * before parsing and values turned back into strings, so the result is
 * CouchDB's model: flat section names, every value a string.
 * Values `ini` turns into arrays (`key[] = ...`) are rejected by name.
 */
import { parse } from "ini";
import type { ConfigError, IniSections } from "../core/shared/ini.js";

export interface ParsedIni {
  readonly sections: IniSections;
  readonly errors: readonly ConfigError[];
}

export function parseIniText(text: string): ParsedIni {
  const sections: Record<string, Record<string, string>> = {};
  const errors: ConfigError[] = [];
  const visit = (sectionName: string, node: Record<string, unknown>): void => {
    for (const [key, value] of Object.entries(node)) {
      if (isPlainObject(value)) {
        visit(sectionName === "" ? key : `${sectionName}.${key}`, value);
        continue;
      }
      if (sectionName === "") {
        errors.push({ section: "", key, value: String(value), message: "every key must be inside a [section]" });
        continue;
      }
      if (Array.isArray(value)) {
        errors.push({ section: sectionName, key, value: value.map(String).join(","), message: "list syntax (key[]) is not supported; use a comma-separated value" });
        continue;
      }
      (sections[sectionName] ??= {})[key] = value === null ? "null" : String(value);
    }
    // A section with only subsections still exists (e.g. `[smoosh]` written empty).
    if (sectionName !== "") sections[sectionName] ??= {};
  };
  visit("", parse(escapeSectionDots(text)) as Record<string, unknown>);
  return { sections, errors };
}

/** `[smoosh.ratio_dbs]` -> `[smoosh\.ratio_dbs]`: `ini` then keeps the name whole. */
const escapeSectionDots = (text: string): string =>
  text.replace(/^(\s*)\[([^\]\n]*)\](\s*)$/gm, (_line, before: string, name: string, after: string) => `${before}[${name.replace(/(?<!\\)\./g, "\\.")}]${after}`);

/** Later layers win, key by key (CouchDB's default.ini < local.ini model). */
export function mergeIni(...layers: readonly IniSections[]): IniSections {
  const merged: Record<string, Record<string, string>> = {};
  for (const layer of layers) {
    for (const [section, values] of Object.entries(layer)) merged[section] = { ...merged[section], ...values };
  }
  return merged;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
