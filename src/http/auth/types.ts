/**
 * Who is asking. Operator routes and `/_db_updates` are for server admins
 * (CouchDB's `_admin` role); everyone else gets CouchDB's 401/403 bodies
 * (see guard.ts).
 */
import type { IncomingMessage } from "node:http";

export interface Principal {
  readonly name: string;
  readonly roles: readonly string[];
  /** How they proved it, as CouchDB's `_session` `info.authenticated` says: `default` (basic) or `cookie`. */
  readonly authenticated?: string | undefined;
}

/** A principal, `null` for anonymous, or `bad-credentials` when credentials were given and are wrong. */
export type AuthResult = Principal | null | "bad-credentials";

export interface Authenticator {
  /** Rejects only when the authority cannot be asked (e.g. CouchDB is down). */
  authenticate(req: IncomingMessage): Promise<AuthResult>;
  /**
   * False when nobody can be a server admin (no `[admins]`): the server is
   * then open to anyone who can reach it, so it listens on loopback only.
   * CouchDB always has admins (CouchDB 3 refuses to start without one).
   */
  hasAdmins(): boolean;
}

export const ADMIN_ROLE = "_admin";

export const isServerAdmin = (p: AuthResult): p is Principal =>
  p !== null && p !== "bad-credentials" && p.roles.includes(ADMIN_ROLE);

/** CouchDB 3.4's 401 bodies (fixtures 15, 16, 17, 86). */
export const NOT_SERVER_ADMIN = { error: "unauthorized", reason: "You are not a server admin." } as const;
export const BAD_CREDENTIALS = { error: "unauthorized", reason: "Name or password is incorrect." } as const;
/** CouchDB 3.4's `couch_db:throw_security_error/1`: anonymous (401) and named non-members (403) of a db. */
export const NOT_DB_READER_ANONYMOUS = { error: "unauthorized", reason: "You are not authorized to access this db." } as const;
export const NOT_DB_READER = { error: "forbidden", reason: "You are not allowed to access this db." } as const;
