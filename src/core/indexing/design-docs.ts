/**
 * ken's rules on design documents: which of a db's indexes are built.
 *
 * - `"autoupdate": false` switches every index of the design doc off;
 *   `"autoupdate": {"views": false}` (or `indexes`, `st_indexes`, `nouveau`)
 *   one kind only; anything else means on (ken's `should_update/2`);
 * - only design docs in an allowed query language are built
 *   (`[query_servers]`, `[native_query_servers]`);
 * - an index shared by several design docs is built when one of them wants it;
 * - a design doc being deployed (its stage) is built whatever it says.
 *
 * Design docs are then taken in a random order drawn from the core's PRNG
 * (ken and fabric2_index shuffle them: no design doc always comes first).
 * Garbage (a body that is not an object, a language that is not a string)
 * is skipped with a reason, never thrown.
 */
import { nextInt, type PrngState } from "../shared/prng.js";
import type { DesignDocId, InspectedIndex, ListedDesignDoc } from "./types.js";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** ken's `should_update(Doc, IndexType)`. */
export const autoUpdates = (body: Readonly<Record<string, unknown>>, field: string): boolean => {
  const autoupdate = body["autoupdate"];
  if (autoupdate === false) return false;
  if (isRecord(autoupdate)) return autoupdate[field] !== false;
  return true;
};

/** The design doc's language, CouchDB's default `javascript`; a non-string is garbage. */
export const languageOf = (body: Readonly<Record<string, unknown>>): string | undefined => {
  const language = body["language"];
  if (language === undefined) return "javascript";
  return typeof language === "string" ? language : undefined;
};

/** Why this design doc does not want its `field` indexes built, or undefined when it does. */
export const refusalOf = (ddoc: ListedDesignDoc | undefined, field: string, languages: ReadonlySet<string>): string | undefined => {
  if (ddoc === undefined) return "its design doc is gone";
  if (!isRecord(ddoc.body)) return "the design doc is not a JSON object";
  if (!autoUpdates(ddoc.body, field)) return `autoupdate is off for ${field}`;
  const language = languageOf(ddoc.body);
  if (language === undefined) return "its language is not a string";
  if (!languages.has(language)) return `language ${JSON.stringify(language)} is not an allowed query server`;
  return undefined;
};

export interface Selection {
  readonly selected: readonly InspectedIndex[];
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
}

/** The indexes to keep up to date; `forced`: design docs built whatever they say (deploy stages). */
export function selectIndexes(
  indexes: readonly InspectedIndex[],
  designDocs: readonly ListedDesignDoc[],
  languages: ReadonlySet<string>,
  forced: ReadonlySet<DesignDocId>,
): Selection {
  const byId = new Map(designDocs.map((ddoc) => [ddoc.id, ddoc]));
  const selected: InspectedIndex[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const index of indexes) {
    const reasons = index.spec.ddocs.map((id) => (forced.has(id) ? undefined : refusalOf(byId.get(id), index.spec.field, languages)));
    if (reasons.some((reason) => reason === undefined)) selected.push(index);
    else skipped.push({ name: index.spec.name, reason: reasons[0] ?? "no design doc" });
  }
  return { selected, skipped };
}

/** Fisher-Yates with the core's PRNG: a random order, and the generator's next state. */
export function shuffled<T>(items: readonly T[], prng: PrngState): readonly [T[], PrngState] {
  const out = [...items];
  let state = prng;
  for (let i = out.length - 1; i > 0; i--) {
    const [j, next] = nextInt(state, i + 1);
    state = next;
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return [out, state];
}
