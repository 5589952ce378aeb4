/** The recorded CouchDB 3.4.3 exchanges (test/fixtures/couchdb-3.4.3, see its README). */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export interface Exchange {
  readonly file: string;
  readonly description: string;
  readonly request: { method: string; path: string; headers: Record<string, string>; body: unknown };
  readonly response: { status: number; headers: Record<string, string>; body: unknown };
}

/**
 * A copy kept in the repo (recorded from a real CouchDB 3.4.3; no CouchDB
 * package exists for our CI machines), so a clone tests on its own.
 * `COUCH_FIXTURES_DIR` points at another recording.
 */
export const fixturesDir = resolve(process.env.COUCH_FIXTURES_DIR ?? join(import.meta.dirname, "../fixtures/couchdb-3.4.3"));

export const loadExchanges = (): Exchange[] =>
  readdirSync(fixturesDir)
    .filter((f) => /^\d+-.*\.json$/.test(f))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(join(fixturesDir, file), "utf8")) as Omit<Exchange, "file">) }));

export const exchange = (prefix: string): Exchange => {
  const found = loadExchanges().find((e) => e.file.startsWith(`${prefix}-`));
  if (found === undefined) throw new Error(`no fixture ${prefix}`);
  return found;
};
