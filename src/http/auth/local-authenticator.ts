/**
 * Admins from the `[admins]` INI section (CouchDB's formats, see
 * password-hash.ts), with Basic auth and `AuthSession` cookies. Used when
 * upholster serves a store without its own users (the in-memory store,
 * PouchDB Server). Plain-text passwords are hashed at load and never kept.
 *
 * `[chttpd_auth]`: `secret` (cookie key; random per start when absent, so
 * cookies do not survive a restart), `timeout` (cookie lifetime, s, 600),
 * `iterations` (for plain-text passwords, 600000 as CouchDB 3.4),
 * `pbkdf2_prf` (sha256).
 */
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { IniSections } from "../../core/shared/ini.js";
import type { Clock } from "../../ports/shell.js";
import { ADMIN_ROLE, type Authenticator, type AuthResult, type Principal } from "./types.js";
import { basicCredentials, cookieValue } from "./credentials.js";
import { formatPasswordHash, hashPassword, parsePasswordHash, verifyPassword, type PasswordHash } from "./password-hash.js";
import { AUTH_COOKIE, makeSessionCookie, verifySessionCookie } from "./session-cookie.js";

export interface LocalAuthenticator extends Authenticator {
  /** Checks a name/password pair (`POST /_session`). */
  login(name: string, password: string): Promise<Principal | undefined>;
  /** A fresh `AuthSession` cookie value for an admin. */
  issueCookie(name: string): string;
  readonly cookieTimeoutSeconds: number;
  /** The admins' stored hashes (plain-text ones as hashed at load), e.g. to write back to the INI. */
  hashes(): ReadonlyMap<string, string>;
}

export const isLocalAuthenticator = (auth: Authenticator): auth is LocalAuthenticator => "login" in auth && "issueCookie" in auth;

export interface LocalAuthenticatorOptions {
  readonly config: IniSections;
  readonly clock: Clock;
  readonly logger?: { warn(fields: object, msg: string): void };
}

/** Bounded cache of verified (name, password digest): PBKDF2 with 600k iterations costs ~0.2 s a check. */
const VERIFIED_CACHE_MAX = 1_000;

export async function createLocalAuthenticator(options: LocalAuthenticatorOptions): Promise<LocalAuthenticator> {
  const { config, clock } = options;
  const authConfig = config["chttpd_auth"] ?? {};
  const iterations = positiveInt(authConfig["iterations"], 600_000);
  const prf = authConfig["pbkdf2_prf"] ?? "sha256";
  const cookieTimeoutSeconds = positiveInt(authConfig["timeout"], 600);
  const secret = authConfig["secret"] ?? randomBytes(32).toString("hex");

  const admins = new Map<string, PasswordHash>();
  for (const [name, value] of Object.entries(config["admins"] ?? {})) {
    const parsed = parsePasswordHash(value.trim());
    if (parsed === "plain") admins.set(name, await hashPassword(value, iterations, prf));
    else if ("error" in parsed) options.logger?.warn({ section: "admins", key: name, error: parsed.error }, "ignoring admin with a malformed password hash");
    else admins.set(name, parsed);
  }
  const verified = new Map<string, true>();
  const saltOf = (name: string): string | undefined => admins.get(name)?.salt;

  async function check(name: string, password: string): Promise<Principal | undefined> {
    const hash = admins.get(name);
    if (hash === undefined) return undefined;
    const cacheKey = `${name}\u0000${createHash("sha256").update(hash.salt + password).digest("hex")}`;
    if (verified.has(cacheKey)) return { name, roles: [ADMIN_ROLE] };
    if (!(await verifyPassword(hash, password))) return undefined;
    verified.set(cacheKey, true);
    if (verified.size > VERIFIED_CACHE_MAX) verified.delete(verified.keys().next().value as string);
    return { name, roles: [ADMIN_ROLE] };
  }

  return {
    cookieTimeoutSeconds,
    hasAdmins: () => admins.size > 0,
    async authenticate(req: IncomingMessage): Promise<AuthResult> {
      const basic = basicCredentials(req);
      if (basic === "invalid") return "bad-credentials";
      if (basic !== undefined) {
        const principal = await check(basic.name, basic.password);
        return principal === undefined ? "bad-credentials" : { ...principal, authenticated: "default" };
      }
      const cookie = cookieValue(req, AUTH_COOKIE);
      if (cookie === undefined || cookie === "") return null;
      const claims = verifySessionCookie(cookie, saltOf, secret, clock.nowMs() / 1000, cookieTimeoutSeconds);
      // CouchDB ignores a bad or expired cookie: the request is anonymous.
      return claims === undefined ? null : { name: claims.name, roles: [ADMIN_ROLE], authenticated: "cookie" };
    },
    login: check,
    issueCookie: (name) => makeSessionCookie(name, saltOf(name) ?? "", secret, clock.nowMs() / 1000),
    hashes: () => new Map([...admins].map(([name, hash]) => [name, formatPasswordHash(hash)])),
  };
}

function positiveInt(raw: string | undefined, fallback: number): number {
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return fallback;
  const n = Number(raw.trim());
  return n > 0 && Number.isSafeInteger(n) ? n : fallback;
}
