/**
 * Where an unprotected server may listen. Without any server admin every
 * route is open (guard.ts), which is acceptable on loopback — only this
 * machine can reach it, as with a notebook server — and nowhere else:
 * CouchDB 3 refuses to start without an admin, and so does upholster when
 * asked to bind anything but loopback.
 */
import { isIP } from "node:net";

/** `127.0.0.0/8`, `::1`, `localhost` (and IPv4-mapped loopback). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1" || /^::ffff:127\./.test(bare);
  return false;
}

/** Thrown by `start()` for a non-loopback bind without admins; the message says how to fix it. */
export class UnprotectedServerError extends Error {
  override readonly name = "UnprotectedServerError";
  constructor(readonly host: string) {
    super(
      `refusing to listen on ${host} without a server admin: anyone who can reach it could suspend compaction or read the db updates feed. ` +
        "Add an [admins] section (name = password), or bind to 127.0.0.1",
    );
  }
}

/** What is logged, once, when the server runs without admins on loopback. */
export const UNPROTECTED_WARNING =
  "no server admins: the HTTP API is open to anyone on this machine (it listens on loopback only). Add an [admins] section (name = password) to protect it";
