/**
 * Naming compaction objects: a stable key for maps and queues, a readable
 * form for logs, and the few relations between objects the rules need.
 */
import type { ChannelKind, CompactionObject, DbName } from "./types.js";

// NUL cannot occur in a CouchDB db name or doc id, so keys cannot collide: a
// db's key is its name, every other key of it starts with `db + "\u0000"`.
const SEP = "\u0000";

/**
 * Stable and unique per object: equal objects give equal keys. A db's key is
 * its name itself, the most frequent key by far (an update event names a db):
 * no string is built, and the name the event carries has its hash already.
 * Keys still sort by db first (NUL sorts before any name character).
 */
export const objectKey = (object: CompactionObject): string => {
  switch (object.kind) {
    case "db":
      return object.db;
    case "view":
      return `${object.db}${SEP}view${SEP}${object.ddoc}`;
    case "cleanup":
      return `${object.db}${SEP}cleanup`;
    case "geo":
      return `${object.db}${SEP}geo${SEP}${object.signature}`;
  }
};

/**
 * For logs, as CouchDB's `smoosh_utils:stringify`: "db", "db _design/x",
 * "cleanup db"; a geo file is "db _geo/<signature>" (a design doc id always
 * starts with `_design/` and a db name has no space, so none is ambiguous).
 */
export const describeObject = (object: CompactionObject): string => {
  switch (object.kind) {
    case "db":
      return object.db;
    case "view":
      return `${object.db} ${object.ddoc}`;
    case "cleanup":
      return `cleanup ${object.db}`;
    case "geo":
      return `${object.db} _geo/${object.signature}`;
  }
};

/**
 * The channels an object kind goes through. Geo index files go through the
 * view channels (`[smoosh.ratio_views]` etc.): CouchDB's smoosh has no geo,
 * and hastings indexes are index files like views, append-only until
 * compacted, so the same ratio and slack thresholds fit them. A separate
 * `geo_channels` would be a new knob nobody could set from CouchDB habits.
 */
export const channelKindOf = (kind: CompactionObject["kind"]): ChannelKind => (kind === "geo" ? "view" : kind);

/** The db an object belongs to (what the ignore list and `db-deleted` match on). */
export const objectDb = (object: CompactionObject): DbName => object.db;

/** The index cleanup object of a db. */
export const cleanupOf = (db: DbName): CompactionObject => ({ kind: "cleanup", db });

/** Whether `key` is the key of `db` or of one of its objects. */
export const isKeyOfDb = (key: string, db: DbName): boolean =>
  key.startsWith(db) && (key.length === db.length || key.charCodeAt(db.length) === 0);
