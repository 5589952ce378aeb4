/**
 * CouchDB's naming rules for databases and document ids, so the embedded
 * store rejects what a real CouchDB would.
 */

/** `couch_db:validate_dbname/1`: lowercase letter first, then `a-z 0-9 _ $ ( ) + - /`. */
const DB_NAME = /^[a-z][a-z0-9_$()+/-]*$/;

/** System databases CouchDB lets users create despite the leading underscore. */
const SYSTEM_DBS = new Set(["_users", "_replicator", "_global_changes"]);

/** CouchDB's limit on a database name (bytes). */
const MAX_DB_NAME_LENGTH = 238;

/** `undefined` when valid, else why not (CouchDB's `illegal_database_name` reason, shortened). */
export function dbNameProblem(name: unknown): string | undefined {
  if (typeof name !== "string") return `database name must be a string, got ${typeof name}`;
  if (name.length > MAX_DB_NAME_LENGTH) return `database name ${JSON.stringify(name.slice(0, 40))}... is longer than ${MAX_DB_NAME_LENGTH}`;
  if (SYSTEM_DBS.has(name)) return undefined;
  // `.../_users` and `.../_replicator` are allowed as prefixed system dbs.
  const slash = name.lastIndexOf("/");
  if (slash > 0 && SYSTEM_DBS.has(name.slice(slash + 1)) && DB_NAME.test(name.slice(0, slash))) return undefined;
  if (!DB_NAME.test(name)) {
    return `database name ${JSON.stringify(name)}: only lowercase characters (a-z), digits (0-9), and any of _$()+-/ are allowed, and it must begin with a letter`;
  }
  return undefined;
}

export const DESIGN_PREFIX = "_design/";
export const LOCAL_PREFIX = "_local/";

export const isDesignDocId = (id: string): boolean => id.startsWith(DESIGN_PREFIX) && id.length > DESIGN_PREFIX.length;

/** `undefined` when `id` may be written, else CouchDB's reason. */
export function docIdProblem(id: string): string | undefined {
  if (id.length === 0) return "document id must not be empty";
  if (id.startsWith(LOCAL_PREFIX)) return "_local documents are not supported by the memory store";
  if (id.startsWith("_") && !isDesignDocId(id)) return "Only reserved document ids may start with underscore.";
  return undefined;
}
