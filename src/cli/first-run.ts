/**
 * The first run: `npm start` on a fresh clone has no `[admins]`, and every
 * operator route and `/_db_updates` are for server admins. So the demo
 * makes one for this run, with a random password printed once on stdout
 * (never logged), next to ready-to-paste curl lines, as notebook servers
 * print a token. Only for the in-memory demo: a real store keeps its admins.
 */
import { randomBytes } from "node:crypto";
import type { IniSections } from "../core/shared/ini.js";

export interface RunAdmin {
  readonly name: string;
  readonly password: string;
}

export const FIRST_RUN_ADMIN_NAME = "admin";

/** 144 random bits, URL-safe base64: pastes into a shell and a URL unquoted. */
export const makeFirstRunAdmin = (): RunAdmin => ({ name: FIRST_RUN_ADMIN_NAME, password: randomBytes(18).toString("base64url") });

/** Whether this run needs one: the in-memory store with its demo, and no `[admins]` configured. */
export const needsFirstRunAdmin = (ini: IniSections, demoRuns: boolean): boolean =>
  demoRuns && Object.keys(ini["admins"] ?? {}).length === 0;

/** What `run` prints after `upholster listening on ...`, so a newcomer can read the feed and the queues. */
export function firstRunLines(url: string, admin: RunAdmin): string[] {
  const user = `${admin.name}:${admin.password}`;
  return [
    `server admin for this run (no [admins] configured): ${admin.name} / ${admin.password} (shown only here; add [admins] to choose your own)`,
    `  curl -u '${user}' '${url}/_db_updates?feed=continuous&heartbeat=true'`,
    `  curl -u '${user}' '${url}/_smoosh/status'`,
  ];
}

/** With admins configured (or CouchDB's), how to get in, without any password. */
export const signInLine = (url: string, whose: string): string => `sign in as ${whose}: curl -u NAME:PASSWORD '${url}/_db_updates'`;
