/**
 * hastings' `st_indexes` member of a design doc, decoded: which geo indexes
 * a design doc declares, and their signatures. Pure.
 *
 *   "st_indexes": { "<name>": { "index": "function (doc) { st_index(doc.geometry); }",
 *                               "dimensions"?: 2 | 3 | 4, "srid"?: 4326 | "urn:ogc:def:crs:EPSG::4326",
 *                               "type"?: "rtree", "analyzer"?: ... } }
 *
 * The signature is a digest of (definition, type, dimensions, srid), as
 * hastings' `design_doc_to_index` hashes it (not the language, not the
 * name): design docs that declare the same index share one, whatever they
 * call it. `analyzer` is accepted and ignored (hastings copied the member
 * from dreyfus; easton has no analyzers), so it is not in the signature.
 *
 * Bodies are untrusted: a bad member leaves that one index out, with a
 * reason naming the field and the value; the other indexes still work.
 */
import * as t from "io-ts";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { digestOf } from "../indexing/identity.js";
import type { DesignDocId, IndexProblem, IndexSpec, ListedDesignDoc } from "../indexing/types.js";
import type { IndexDiscovery } from "../indexing/index-specs.js";

export const ST_INDEXES_FIELD = "st_indexes";
export const ST_INDEXES_TYPE = "st_indexes";
/** easton's only index type, hastings' default. */
export const DEFAULT_ST_INDEX_TYPE = "rtree";
export const EPSG_4326 = 4326;
const EPSG_4326_URN_TEXT = "urn:ogc:def:crs:EPSG::4326";

export type StIndexDimensions = 2 | 3 | 4;

/** One decoded `st_indexes` member. */
export interface StIndexDefinition {
  /** The JS source of the index function. */
  readonly index: string;
  readonly type: string;
  readonly dimensions: StIndexDimensions;
  /** Always 4326: both spellings hastings accepts mean the same planar degrees. */
  readonly srid: typeof EPSG_4326;
}

const DimensionsC = t.union([t.literal(2), t.literal(3), t.literal(4)], "2, 3 or 4");
const SridC = t.union([t.literal(EPSG_4326), t.literal(EPSG_4326_URN_TEXT)], `${EPSG_4326} or "${EPSG_4326_URN_TEXT}"`);
const NonEmptyString = t.refinement(t.string, (s) => s.trim() !== "", "a non-empty string");

/** Field by field, so an error names the field (and its value) that failed. */
const MEMBER_CODECS: Readonly<Record<string, t.Decoder<unknown, unknown>>> = {
  index: NonEmptyString,
  type: NonEmptyString,
  dimensions: DimensionsC,
  srid: SridC,
};

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** One member's definition, or why it cannot be used (the field and the value). */
export function decodeStIndex(name: string, raw: unknown): Either<string, StIndexDefinition> {
  if (!isRecord(raw)) return left(`st_indexes.${name} is not an object: ${shown(raw)}`);
  if (raw["index"] === undefined) return left(`st_indexes.${name}.index is missing (the index function)`);
  for (const [field, codec] of Object.entries(MEMBER_CODECS)) {
    const value = raw[field];
    if (value === undefined) continue;
    if (isLeft(codec.decode(value))) return left(`st_indexes.${name}.${field} = ${shown(value)}: expected ${(codec as t.Any).name}`);
  }
  return right({
    index: raw["index"] as string,
    type: (raw["type"] as string | undefined) ?? DEFAULT_ST_INDEX_TYPE,
    dimensions: (raw["dimensions"] as StIndexDimensions | undefined) ?? 2,
    srid: EPSG_4326,
  });
}

/** What hastings hashes: the definition, type, dimensions and srid. */
export const stIndexSignature = (definition: StIndexDefinition): string =>
  digestOf([definition.index, definition.type, definition.dimensions, definition.srid]);

export interface DecodedStIndexes {
  /** Usable members by name, sorted by name. */
  readonly indexes: ReadonlyMap<string, StIndexDefinition>;
  readonly problems: readonly string[];
}

/** Every member of a design doc body's `st_indexes`; no member (or no body) is no index, not a problem. */
export function decodeStIndexes(body: unknown): DecodedStIndexes {
  const declared = isRecord(body) ? body[ST_INDEXES_FIELD] : undefined;
  if (declared === undefined) return { indexes: new Map(), problems: [] };
  if (!isRecord(declared)) return { indexes: new Map(), problems: [`st_indexes is not an object: ${shown(declared)}`] };
  const indexes = new Map<string, StIndexDefinition>();
  const problems: string[] = [];
  for (const name of Object.keys(declared).sort()) {
    const decoded = decodeStIndex(name, declared[name]);
    if (decoded._tag === "Left") problems.push(decoded.left);
    else indexes.set(name, decoded.right);
  }
  return { indexes, problems };
}

/** The language hastings runs: a design doc in another one cannot be built here. */
const languageProblem = (body: Record<string, unknown>): string | undefined => {
  const language = body["language"];
  return language === undefined || language === "javascript" ? undefined : `st_indexes in language ${shown(language)} cannot be built here`;
};

const byId = (a: ListedDesignDoc, b: ListedDesignDoc): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

interface Group {
  readonly entry: string;
  readonly ddocs: DesignDocId[];
}

/**
 * One IndexSpec per signature (key = the signature), listing every design
 * doc that declares it (sorted); `entry` is its name in the first of them.
 */
export function geoIndexesOf(designDocs: readonly ListedDesignDoc[]): IndexDiscovery {
  const bySignature = new Map<string, Group>();
  const problems: IndexProblem[] = [];
  for (const ddoc of [...designDocs].sort(byId)) {
    if (!isRecord(ddoc.body) || ddoc.body[ST_INDEXES_FIELD] === undefined) continue;
    const language = languageProblem(ddoc.body);
    if (language !== undefined) {
      problems.push({ ddoc: ddoc.id, reason: language });
      continue;
    }
    const decoded = decodeStIndexes(ddoc.body);
    for (const reason of decoded.problems) problems.push({ ddoc: ddoc.id, reason });
    for (const [name, definition] of decoded.indexes) {
      const signature = stIndexSignature(definition);
      const group = bySignature.get(signature);
      if (group === undefined) bySignature.set(signature, { entry: name, ddocs: [ddoc.id] });
      else if (!group.ddocs.includes(ddoc.id)) group.ddocs.push(ddoc.id);
    }
  }
  const indexes = [...bySignature].map(
    ([key, { entry, ddocs }]): IndexSpec => ({ type: ST_INDEXES_TYPE, key, ddocs, name: `${ddocs[0]!}/${entry}`, field: ST_INDEXES_FIELD, entry }),
  );
  return { indexes, problems };
}
