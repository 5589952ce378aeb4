/**
 * A Basic-auth authenticator over a fixed table of users, as CouchDB's
 * `_users` would hold them: the authority the server's guard asks in the
 * HTTP tests.
 */
import { basicCredentials, type Authenticator } from "../../src/http/auth/index.js";

export type UserTable = Readonly<Record<string, { readonly password: string; readonly roles: readonly string[] }>>;

export const userTableAuthenticator = (users: UserTable): Authenticator => ({
  hasAdmins: () => true,
  async authenticate(req) {
    const basic = basicCredentials(req);
    if (basic === undefined) return null;
    if (basic === "invalid" || users[basic.name]?.password !== basic.password) return "bad-credentials";
    return { name: basic.name, roles: [...users[basic.name]!.roles] };
  },
});
