/**
 * Which indexes design docs define, for the built-in backends: pure
 * functions over the (untrusted) bodies, shared by the memory store's and
 * CouchDB's backends so both see the same indexes with the same keys.
 *
 * - views: one index per view group (couch_mrview: all views of a design
 *   doc are built together); design docs with identical views share it, as
 *   in CouchDB, so its key is a digest of what defines its rows;
 * - named indexes (`indexes` for search, `nouveau`, `st_indexes` for geo):
 *   one index per entry with an `index` function, keyed by name and digest.
 *
 * Garbage never throws: what cannot be used is left out with a reason.
 */
import { viewGroupOf } from "../views/index.js";
import { digestOf } from "./identity.js";
import type { DesignDocId, IndexProblem, IndexSpec, IndexType, ListedDesignDoc } from "./types.js";

export interface IndexDiscovery {
  readonly indexes: readonly IndexSpec[];
  readonly problems: readonly IndexProblem[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const byId = (a: ListedDesignDoc, b: ListedDesignDoc): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** View groups: one spec per distinct group, listing every design doc that defines it. */
export function viewIndexesOf(designDocs: readonly ListedDesignDoc[], languages?: ReadonlySet<string>): IndexDiscovery {
  const byKey = new Map<string, { readonly entry: string; readonly ddocs: DesignDocId[] }>();
  const problems: IndexProblem[] = [];
  for (const ddoc of [...designDocs].sort(byId)) {
    if (!isRecord(ddoc.body)) {
      problems.push({ ddoc: ddoc.id, reason: "the design doc is not a JSON object" });
      continue;
    }
    const group = viewGroupOf(ddoc.body);
    if (group === undefined) {
      if (ddoc.body["views"] !== undefined && Object.keys(isRecord(ddoc.body["views"]) ? ddoc.body["views"] : {}).some((name) => name !== "lib")) {
        problems.push({ ddoc: ddoc.id, reason: "no usable view (each needs a string map function)" });
      }
      continue;
    }
    for (const skipped of group.skipped) problems.push({ ddoc: ddoc.id, reason: `view ${JSON.stringify(skipped.view)} left out: ${skipped.reason}` });
    if (languages !== undefined && !languages.has(group.language)) {
      problems.push({ ddoc: ddoc.id, reason: `views in language ${JSON.stringify(group.language)} cannot be built here` });
      continue;
    }
    const key = `v-${digestOf(group.signatureInput)}`;
    const entry = [...group.views.keys()].sort()[0]!;
    const known = byKey.get(key);
    byKey.set(key, { entry: known?.entry ?? entry, ddocs: [...(known?.ddocs ?? []), ddoc.id] });
  }
  const indexes = [...byKey].map(([key, { entry, ddocs }]): IndexSpec => ({ type: "views", key, ddocs, name: ddocs[0]!, field: "views", entry }));
  return { indexes, problems };
}

/**
 * Indexes declared as `{ "<field>": { "<name>": { "index": "function..." , ... } } }`:
 * dreyfus search (`indexes`), nouveau (`nouveau`), hastings geo (`st_indexes`).
 */
export function namedIndexesOf(type: IndexType, field: string, designDocs: readonly ListedDesignDoc[]): IndexDiscovery {
  const indexes: IndexSpec[] = [];
  const problems: IndexProblem[] = [];
  for (const ddoc of [...designDocs].sort(byId)) {
    const declared = isRecord(ddoc.body) ? ddoc.body[field] : undefined;
    if (declared === undefined) continue;
    if (!isRecord(declared)) {
      problems.push({ ddoc: ddoc.id, reason: `${field} is not an object` });
      continue;
    }
    for (const [name, definition] of Object.entries(declared).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (!isRecord(definition) || typeof definition["index"] !== "string") {
        problems.push({ ddoc: ddoc.id, reason: `${field}.${name} has no index function` });
        continue;
      }
      indexes.push({ type, key: `${ddoc.id}/${name}-${digestOf(definition)}`, ddocs: [ddoc.id], name: `${ddoc.id}/${name}`, field, entry: name });
    }
  }
  return { indexes, problems };
}
