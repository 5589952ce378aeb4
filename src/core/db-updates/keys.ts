/**
 * Event keys: the document ids of the feed database, one per (type, db[, account]).
 *
 * CouchDB writes `<type>:<dbname>` and, where accounts exist (Cloudant),
 * `<type>:<account>/<dbname>`, and its reader splits on the first `/`. That
 * is ambiguous: CouchDB db names may contain `/` (`^[a-z][a-z0-9_$()+/-]*$`),
 * so `created:team/db` could be db `team/db` or db `db` of account `team`.
 *
 * upholster's encoding (exact round-trip for every db name string, including
 * ones with `/` and `:`, and every non-empty account string):
 * - the type never contains `:`, so the key splits at the FIRST `:`;
 * - without an account the rest is the db name verbatim, so for every valid
 *   CouchDB db name the key is byte-for-byte CouchDB's `<type>:<dbname>`;
 * - with an account the rest is `~<encodeURIComponent(account)>/<dbname>`:
 *   `~` cannot start a CouchDB db name and the encoded account has no `/`;
 * - a db name that itself starts with `~` (not a CouchDB name; other stores
 *   may allow it) is escaped as `~/<dbname>` (an account is never empty).
 */
import { type Either, left, right } from "fp-ts/lib/Either.js";

export const EVENT_TYPES = ["created", "updated", "deleted"] as const;
export type DbEventType = (typeof EVENT_TYPES)[number];

export interface EventKey {
  readonly type: DbEventType;
  readonly db: string;
  /** Owner of the db, where the deployment has accounts; absent otherwise. */
  readonly account?: string | undefined;
}

const ACCOUNT_MARK = "~";

export const isDbEventType = (s: string): s is DbEventType => (EVENT_TYPES as readonly string[]).includes(s);

export function encodeKey(key: EventKey): string {
  if (key.account !== undefined && key.account.length > 0) {
    return `${key.type}:${ACCOUNT_MARK}${encodeURIComponent(key.account)}/${key.db}`;
  }
  const rest = key.db.startsWith(ACCOUNT_MARK) ? `${ACCOUNT_MARK}/${key.db}` : key.db;
  return `${key.type}:${rest}`;
}

/** Left: why the id is not an event key (foreign docs in the feed db are skipped, not fatal). */
export function parseKey(id: string): Either<string, EventKey> {
  const colon = id.indexOf(":");
  if (colon < 0) return left(`event key ${JSON.stringify(id)} has no ':'`);
  const type = id.slice(0, colon);
  if (!isDbEventType(type)) return left(`event key ${JSON.stringify(id)} has unknown type ${JSON.stringify(type)}`);
  const rest = id.slice(colon + 1);
  if (!rest.startsWith(ACCOUNT_MARK)) {
    return rest.length > 0 ? right({ type, db: rest }) : left(`event key ${JSON.stringify(id)} has no db name`);
  }
  const slash = rest.indexOf("/");
  if (slash < 0) return left(`event key ${JSON.stringify(id)} has an account but no db name`);
  const encodedAccount = rest.slice(ACCOUNT_MARK.length, slash);
  const db = rest.slice(slash + 1);
  if (db.length === 0) return left(`event key ${JSON.stringify(id)} has no db name`);
  if (encodedAccount.length === 0) return right({ type, db });
  let account: string;
  try {
    account = decodeURIComponent(encodedAccount);
  } catch {
    return left(`event key ${JSON.stringify(id)} has a badly encoded account ${JSON.stringify(encodedAccount)}`);
  }
  return right({ type, db, account });
}
