/**
 * The one place where routes' `Access` is enforced, with CouchDB 3.4's
 * answers (checked against a running CouchDB 3.4.3 and fixtures 15-17, 86):
 *
 * - wrong credentials: 401 "Name or password is incorrect." (even where the
 *   route is open to admins only: CouchDB authenticates before it authorizes);
 * - server admin routes, anonymous or any other user: 401 "You are not a
 *   server admin." (CouchDB answers 401, not 403, to named non-admins too);
 * - db reader routes: anonymous 401 "You are not authorized to access this
 *   db.", named non-members 403 "You are not allowed to access this db.";
 * - the authority cannot be asked (CouchDB down): 503.
 *
 * With no admins at all (`hasAdmins()` false) every route is open: CouchDB
 * 2's "admin party". The server then listens on loopback only (exposure.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../ports/shell.js";
import { errorText } from "../../core/shared/error-text.js";
import { sendJson } from "../respond.js";
import type { Access } from "./access.js";
import {
  BAD_CREDENTIALS,
  NOT_DB_READER,
  NOT_DB_READER_ANONYMOUS,
  NOT_SERVER_ADMIN,
  isServerAdmin,
  type Authenticator,
  type Principal,
} from "./types.js";

/** Who was let in. `isAdmin` is also true for everyone when there are no admins. */
export interface Admission {
  /** `null`: anonymous (a public route, or no admins at all). */
  readonly principal: Principal | null;
  readonly isAdmin: boolean;
}

export interface Guard {
  /** Resolves with who was let in, or answers the request itself (401/403/503) and resolves `undefined`. */
  admit(req: IncomingMessage, res: ServerResponse, access: Access): Promise<Admission | undefined>;
}

/** Who reads a database (CouchDB's `_security` members). For `db-reader` routes; absent, only admins read. */
export interface DbSecurity {
  isReader(principal: Principal, db: string): Promise<boolean>;
}

export interface GuardOptions {
  readonly authenticator: Authenticator;
  /** `[upholster] public_status`: read-only status without credentials. Default false. */
  readonly publicStatus?: boolean;
  readonly dbSecurity?: DbSecurity;
  readonly logger?: Pick<Logger, "warn">;
}

const ANONYMOUS: Admission = { principal: null, isAdmin: false };
const ADMIN_PARTY: Admission = { principal: null, isAdmin: true };

export function createGuard(options: GuardOptions): Guard {
  const { authenticator } = options;
  const openWithoutCredentials = (access: Access): boolean =>
    access.kind === "public" || (access.kind === "status" && options.publicStatus === true);

  return {
    async admit(req, res, access) {
      if (openWithoutCredentials(access)) return ANONYMOUS;
      if (!authenticator.hasAdmins()) return ADMIN_PARTY;
      let who;
      try {
        who = await authenticator.authenticate(req);
      } catch (error) {
        options.logger?.warn({ path: req.url, error: errorText(error) }, "cannot check credentials");
        sendJson(res, 503, { error: "service_unavailable", reason: "Cannot check credentials now." });
        return undefined;
      }
      if (who === "bad-credentials") return deny(res, 401, BAD_CREDENTIALS);
      if (isServerAdmin(who)) return { principal: who, isAdmin: true };
      if (access.kind !== "db-reader") return deny(res, 401, NOT_SERVER_ADMIN);
      if (who === null) return deny(res, 401, NOT_DB_READER_ANONYMOUS);
      if (await isReader(options.dbSecurity, who, access.db)) return { principal: who, isAdmin: false };
      return deny(res, 403, NOT_DB_READER);
    },
  };
}

const isReader = async (security: DbSecurity | undefined, who: Principal, db: string): Promise<boolean> =>
  security !== undefined && (await security.isReader(who, db));

const deny = (res: ServerResponse, status: number, body: object): undefined => {
  sendJson(res, status, body);
  return undefined;
};

/**
 * For routes served outside upholster's server (an embedder's own server, a
 * test harness) that were given no guard: only public routes answer.
 */
export const CLOSED_GUARD: Guard = {
  async admit(_req, res, access) {
    if (access.kind === "public") return ANONYMOUS;
    return deny(res, 401, NOT_SERVER_ADMIN);
  },
};
