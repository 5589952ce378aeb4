/**
 * A design document's views as one index group (couch_mrview_util
 * ddoc_to_mrst): every view with a `map` source; views with the same map
 * source and options share one map function (one set of rows), each adding
 * its reduce. The group's signature is a digest of what defines its rows
 * (`signatureInput`): language, design options, and per map function its
 * source, options, view names and reduces. Design docs with identical views
 * therefore share one index, as in CouchDB (the digest itself differs from
 * CouchDB's, which hashes Erlang terms).
 *
 * Garbage never throws: a view that is not an object, has no string `map`,
 * or a `reduce` that is not a string is left out with a reason; a design doc
 * with no usable view has no group.
 */
import { type Collation } from "./row-order.js";

export interface MapFunction {
  readonly source: string;
  readonly options: Readonly<Record<string, unknown>>;
  readonly collation: Collation;
  /** The views reading this map function's rows, by name (sorted). */
  readonly viewNames: readonly string[];
}

export interface ViewDefinition {
  readonly name: string;
  /** Index into the group's `maps`. */
  readonly map: number;
  /** The reduce source: a built-in (`_sum`) or JavaScript; undefined for map-only views. */
  readonly reduce: string | undefined;
}

export interface ViewGroup {
  readonly language: string;
  readonly maps: readonly MapFunction[];
  readonly views: ReadonlyMap<string, ViewDefinition>;
  /** JSON that defines the index: equal inputs, one index. */
  readonly signatureInput: unknown;
  /** Views left out, and why (for logs). */
  readonly skipped: readonly { readonly view: string; readonly reason: string }[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

interface ParsedView {
  readonly name: string;
  readonly source: string;
  readonly options: Readonly<Record<string, unknown>>;
  readonly reduce: string | undefined;
}

const parseView = (name: string, raw: unknown): ParsedView | string => {
  if (!isRecord(raw)) return "not an object";
  const map = raw["map"];
  if (map === undefined) return "no map function";
  if (typeof map !== "string") return "its map is not a string of JavaScript";
  const reduce = raw["reduce"];
  if (reduce !== undefined && reduce !== null && typeof reduce !== "string") return "its reduce is not a string";
  const options = raw["options"];
  if (options !== undefined && !isRecord(options)) return "its options are not an object";
  return { name, source: map, options: options ?? {}, reduce: typeof reduce === "string" ? reduce : undefined };
};

/** Views sharing a map source and options share one map function. */
const mapKey = (view: ParsedView): string => JSON.stringify([view.source, view.options]);

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const buildMaps = (parsed: readonly ParsedView[]): { maps: MapFunction[]; views: Map<string, ViewDefinition> } => {
  const keys = [...new Set(parsed.map(mapKey))].sort(byCodeUnit);
  const indexOf = new Map(keys.map((key, i) => [key, i]));
  const maps = keys.map((key): MapFunction => {
    const members = parsed.filter((view) => mapKey(view) === key);
    const first = members[0]!;
    return {
      source: first.source,
      options: first.options,
      collation: first.options["collation"] === "raw" ? "raw" : "icu",
      viewNames: members.map((view) => view.name).sort(byCodeUnit),
    };
  });
  const views = new Map(parsed.map((view) => [view.name, { name: view.name, map: indexOf.get(mapKey(view))!, reduce: view.reduce }]));
  return { maps, views };
};

/** The index group of a design doc body, or undefined when it defines no usable view. */
export function viewGroupOf(body: Readonly<Record<string, unknown>>): ViewGroup | undefined {
  const rawViews = body["views"];
  if (!isRecord(rawViews)) return undefined;
  const parsed: ParsedView[] = [];
  const skipped: { view: string; reason: string }[] = [];
  for (const [name, raw] of Object.entries(rawViews)) {
    const view = parseView(name, raw);
    if (typeof view === "string") {
      // `lib` holds CommonJS modules for `require`, not a view.
      if (name !== "lib") skipped.push({ view: name, reason: view });
    } else parsed.push(view);
  }
  if (parsed.length === 0) return undefined;
  const language = typeof body["language"] === "string" ? body["language"] : "javascript";
  const designOptions = isRecord(body["options"]) ? body["options"] : {};
  const { maps, views } = buildMaps(parsed);
  const signatureInput = {
    language,
    designOptions,
    lib: rawViews["lib"] ?? {},
    maps: maps.map((map) => ({
      source: map.source,
      options: map.options,
      views: map.viewNames.map((name) => [name, views.get(name)!.reduce ?? null]),
    })),
  };
  return { language, maps, views, signatureInput, skipped };
}
