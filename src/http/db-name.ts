/**
 * CouchDB 3.4's database name rule (`couch_db:validate_dbname/1`), so a name
 * CouchDB would refuse is refused here with CouchDB's own 400 body:
 * lowercase letter first, then `a-z 0-9 _ $ ( ) + - /`, optionally a shard
 * timestamp (`shards/00000000-7fffffff/db.1700000000`); the system dbs
 * (`_users`, `_replicator`, ..., also under a prefix: `team/_users`); 238
 * characters at most (CouchDB's file names end in a shard suffix within 255).
 */
import type { HttpError } from "./body.js";

const DB_NAME = /^[a-z][a-z0-9_$()+/-]*(\.[0-9]{10,})?$/;
const SYSTEM_DBS = new Set(["_dbs", "_global_changes", "_metadata", "_nodes", "_replicator", "_users"]);
export const MAX_DB_NAME_LENGTH = 238;

export function dbNameProblem(name: string): HttpError | undefined {
  if (name.length > MAX_DB_NAME_LENGTH) {
    return {
      status: 400,
      error: "database_name_too_long",
      reason: `Database names are ${MAX_DB_NAME_LENGTH} characters at most; ${JSON.stringify(name.slice(0, 40))}... has ${name.length}.`,
    };
  }
  if (DB_NAME.test(name) || isSystemDbName(name)) return undefined;
  return {
    status: 400,
    error: "illegal_database_name",
    // CouchDB's words (chttpd:error_info/1, fixture 89).
    reason:
      `Name: '${name}'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / ` +
      "are allowed. Must begin with a letter.",
  };
}

function isSystemDbName(name: string): boolean {
  const slash = name.lastIndexOf("/");
  const base = name.slice(slash + 1).replace(/\.[0-9]{10,}$/, "");
  if (!SYSTEM_DBS.has(base)) return false;
  return slash < 0 || DB_NAME.test(name.slice(0, slash));
}
