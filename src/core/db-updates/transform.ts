/**
 * The row transform: a feed db change (key + seq) to a `/_db_updates` row.
 *
 * Rows are `{"db_name","type","seq"}` as in CouchDB 3.4 (the seed wrote
 * `dbname`). Admins also see `"account"` when the key has one (CouchDB's seed
 * showed `"_admin"` for account-less keys; 3.4 shows nothing, and so do we).
 * A non-admin viewer sees only rows of its own account, never account-less
 * or other accounts' rows.
 */
import { isLeft } from "fp-ts/lib/Either.js";
import { parseKey, type DbEventType } from "./keys.js";

export interface DbUpdateRow {
  readonly db_name: string;
  readonly type: DbEventType;
  readonly account?: string;
  readonly seq: string;
}

export type Viewer = { readonly kind: "admin" } | { readonly kind: "owner"; readonly account: string };

export const ADMIN_VIEWER: Viewer = { kind: "admin" };

/** `undefined` when the row is not shown to this viewer (or the id is not an event key). */
export function toRow(id: string, seq: string, viewer: Viewer): DbUpdateRow | undefined {
  const parsed = parseKey(id);
  if (isLeft(parsed)) return undefined;
  const key = parsed.right;
  if (viewer.kind === "owner") {
    if (key.account === undefined || key.account !== viewer.account) return undefined;
    return { db_name: key.db, type: key.type, seq };
  }
  return key.account === undefined
    ? { db_name: key.db, type: key.type, seq }
    : { db_name: key.db, type: key.type, account: key.account, seq };
}
