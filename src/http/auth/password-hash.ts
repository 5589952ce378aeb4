/**
 * CouchDB's `[admins]` password formats:
 * - `-pbkdf2-<derived_key_hex>,<salt>,<iterations>`: PBKDF2-HMAC-SHA1 (CouchDB 1.3 to 3.3);
 * - `-pbkdf2:<prf>-<derived_key_hex>,<salt>,<iterations>`: CouchDB 3.4's form,
 *   `prf` sha256 by default (sha1, sha224, sha384, sha512 too);
 * - `-hashed-<sha1_hex>,<salt>`: CouchDB 1.2's simple salted SHA-1;
 * - anything else is a plain-text password, hashed on load (random salt: here in the shell).
 */
import { createHash, pbkdf2, randomBytes, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

const pbkdf2Async = promisify(pbkdf2);

export type PasswordHash =
  | { readonly scheme: "pbkdf2"; readonly prf: string; readonly derivedKeyHex: string; readonly salt: string; readonly iterations: number }
  | { readonly scheme: "simple"; readonly sha1Hex: string; readonly salt: string };

const PRFS = new Set(["sha1", "sha224", "sha256", "sha384", "sha512"]);

/** `plain` when the value is not a recognised hash (CouchDB treats it as a new plain-text password). */
export function parsePasswordHash(value: string): PasswordHash | "plain" | { readonly error: string } {
  const pbkdf2Match = /^-pbkdf2(?::([a-z0-9]+))?-([0-9a-fA-F]+),([^,]+),(\d+)$/.exec(value);
  if (pbkdf2Match !== null) {
    const prf = pbkdf2Match[1] ?? "sha1";
    if (!PRFS.has(prf)) return { error: `unsupported pbkdf2 prf ${JSON.stringify(prf)}` };
    const iterations = Number(pbkdf2Match[4]);
    if (!Number.isSafeInteger(iterations) || iterations < 1) return { error: "iterations must be a positive integer" };
    return { scheme: "pbkdf2", prf, derivedKeyHex: (pbkdf2Match[2] ?? "").toLowerCase(), salt: pbkdf2Match[3] ?? "", iterations };
  }
  if (value.startsWith("-pbkdf2")) return { error: "malformed -pbkdf2 hash (expected -pbkdf2[:prf]-<hex>,<salt>,<iterations>)" };
  const simple = /^-hashed-([0-9a-fA-F]{40}),(.+)$/.exec(value);
  if (simple !== null) return { scheme: "simple", sha1Hex: (simple[1] ?? "").toLowerCase(), salt: simple[2] ?? "" };
  if (value.startsWith("-hashed-")) return { error: "malformed -hashed- value (expected -hashed-<sha1 hex>,<salt>)" };
  return "plain";
}

export async function verifyPassword(hash: PasswordHash, password: string): Promise<boolean> {
  if (hash.scheme === "simple") {
    const actual = createHash("sha1").update(password + hash.salt).digest();
    return safeEqualHex(actual, hash.sha1Hex);
  }
  const expectedBytes = hash.derivedKeyHex.length / 2;
  const actual = await pbkdf2Async(password, hash.salt, hash.iterations, expectedBytes, hash.prf);
  return safeEqualHex(actual, hash.derivedKeyHex);
}

const safeEqualHex = (actual: Buffer, expectedHex: string): boolean => {
  const expected = Buffer.from(expectedHex, "hex");
  return expected.length === actual.length && timingSafeEqual(actual, expected);
};

/** Hashes a plain-text password as CouchDB 3.4 does (`-pbkdf2:sha256-...`, random 16-byte hex salt). */
export async function hashPassword(password: string, iterations: number, prf = "sha256"): Promise<PasswordHash> {
  const salt = randomBytes(16).toString("hex");
  const keyBytes = prf === "sha1" ? 20 : createHash(prf).digest().length;
  const derived = await pbkdf2Async(password, salt, iterations, keyBytes, prf);
  return { scheme: "pbkdf2", prf, derivedKeyHex: derived.toString("hex"), salt, iterations };
}

export function formatPasswordHash(hash: PasswordHash): string {
  if (hash.scheme === "simple") return `-hashed-${hash.sha1Hex},${hash.salt}`;
  const prefix = hash.prf === "sha1" ? "-pbkdf2-" : `-pbkdf2:${hash.prf}-`;
  return `${prefix}${hash.derivedKeyHex},${hash.salt},${hash.iterations}`;
}
