/**
 * What a route asks of whoever calls it. Routes declare one of these; the
 * server's guard (guard.ts) is the one place that enforces them, so every
 * subsystem's routes (smoosh, db updates, indexing and geo next) get the
 * same rule and CouchDB's bodies.
 *
 * - `public`: anyone (`/`, `/_up`, `/_session`), as in CouchDB.
 * - `admin`: server admins (every operator action, `/_db_updates`, `/_node/...`).
 * - `status`: read-only status; server admins, unless `[upholster] public_status = true`.
 * - `db-reader`: members of a database (CouchDB's `_security` readers) and
 *   server admins. No store exposes `_security` to upholster yet, so today
 *   only admins pass; the guard takes a `DbSecurity` when one does.
 */
export type Access =
  | { readonly kind: "public" }
  | { readonly kind: "admin" }
  | { readonly kind: "status" }
  | { readonly kind: "db-reader"; readonly db: string };

export const PUBLIC: Access = { kind: "public" };
export const ADMIN_ONLY: Access = { kind: "admin" };
export const STATUS: Access = { kind: "status" };
export const dbReader = (db: string): Access => ({ kind: "db-reader", db });
