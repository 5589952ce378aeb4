/**
 * What every per-db route shares: the path segment that names a db, the
 * access it declares (CouchDB's db reader; the guard admits server admins,
 * and with no `_security` on the embedded store that means admins only,
 * which is CouchDB 3's default for new dbs), opening the db (404 `Database
 * does not exist.` when it does not), and `Location` headers.
 */
import type { IncomingMessage } from "node:http";
import { dbReader, type Access } from "../auth/access.js";
import type { RouteContext } from "../router.js";
import type { DocumentApi, DocumentDb } from "./document-api.js";
import { answeringRefusals, DB_MISSING, sendHttpError } from "./errors.js";

/**
 * A db in a path: any segment not starting with `_`, and the system dbs a
 * user may create. `/` inside a name travels as `%2F` (`team%2Fsales`), so
 * one segment is one name; other `_` paths belong to the server.
 */
const DB_SEGMENT = "((?!_)[^/]+|_users|_replicator|_global_changes)";

/** `^/{db}{rest}$`, the db as the first capture group. */
export const dbPath = (rest = ""): RegExp => new RegExp(`^/${DB_SEGMENT}${rest}$`);

export const dbAccess = (params: readonly string[]): Access => dbReader(params[0] ?? "");

export const dbNameOf = (ctx: RouteContext): string => ctx.params[0] ?? "";

/** Opens the route's db and hands it on; 404 when it does not exist, 503 when the store refuses. */
export function withDb(api: DocumentApi, ctx: RouteContext, use: (db: DocumentDb, name: string) => Promise<void>): Promise<void> {
  return answeringRefusals(ctx.res, async () => {
    const name = dbNameOf(ctx);
    const db = await api.openDb(name);
    if (db === undefined) return sendHttpError(ctx.res, DB_MISSING);
    await use(db, name);
  });
}

/** CouchDB's `Location`: the absolute URL of what was created, each segment encoded (`_design%2Fd`, fixture 34). */
export function locationHeader(req: IncomingMessage, ...segments: readonly string[]): Record<string, string> {
  const host = req.headers.host;
  if (host === undefined || host === "") return {};
  return { Location: `http://${host}/${segments.map(encodeURIComponent).join("/")}` };
}

