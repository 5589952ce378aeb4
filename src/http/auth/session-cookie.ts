/**
 * `AuthSession` cookies as CouchDB makes them: base64url(`name:timeHex:mac`),
 * `timeHex` the issue time in seconds. CouchDB's MAC is HMAC-SHA1 over
 * `name:timeHex` keyed by secret + the user's salt; ours is HMAC-SHA256
 * (deliberate: cookies are only read by the server that issued them). Keying
 * with the user's salt means a changed password invalidates old cookies.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const AUTH_COOKIE = "AuthSession";

export function makeSessionCookie(name: string, userSalt: string, secret: string, issuedAtSeconds: number): string {
  const timeHex = Math.floor(issuedAtSeconds).toString(16).toUpperCase();
  const mac = sign(`${name}:${timeHex}`, secret + userSalt);
  return Buffer.from(`${name}:${timeHex}:`).toString("base64url") + "." + mac.toString("base64url");
}

export interface CookieClaims {
  readonly name: string;
  readonly issuedAtSeconds: number;
}

/** Reads the unverified claims (to find the user's salt); `undefined` when malformed. */
export function readSessionCookie(cookie: string): (CookieClaims & { readonly mac: Buffer }) | undefined {
  const dot = cookie.lastIndexOf(".");
  if (dot < 0) return undefined;
  const head = Buffer.from(cookie.slice(0, dot), "base64url").toString("utf8");
  const match = /^(.*):([0-9A-F]+):$/.exec(head);
  if (match === null) return undefined;
  return { name: match[1] ?? "", issuedAtSeconds: parseInt(match[2] ?? "", 16), mac: Buffer.from(cookie.slice(dot + 1), "base64url") };
}

export function verifySessionCookie(
  cookie: string,
  saltOf: (name: string) => string | undefined,
  secret: string,
  nowSeconds: number,
  timeoutSeconds: number,
): CookieClaims | undefined {
  const claims = readSessionCookie(cookie);
  if (claims === undefined) return undefined;
  const salt = saltOf(claims.name);
  if (salt === undefined) return undefined;
  const timeHex = claims.issuedAtSeconds.toString(16).toUpperCase();
  const expected = sign(`${claims.name}:${timeHex}`, secret + salt);
  if (expected.length !== claims.mac.length || !timingSafeEqual(expected, claims.mac)) return undefined;
  if (nowSeconds >= claims.issuedAtSeconds + timeoutSeconds || claims.issuedAtSeconds > nowSeconds + 60) return undefined;
  return { name: claims.name, issuedAtSeconds: claims.issuedAtSeconds };
}

const sign = (data: string, key: string): Buffer => createHmac("sha256", key).update(data).digest();
