/**
 * The daemon contract against a real CouchDB named by COUCHDB_URL (loopback
 * only), e.g. `COUCHDB_URL=http://admin:pass@127.0.0.1:5984 npx vitest run test/contract`.
 * Skipped, with a message, when it is not set.
 */
import { describe, it } from "vitest";
import { daemonContract } from "./daemon-contract.js";
import { httpDaemonHarness } from "./http-daemon-harness.js";

const raw = process.env.COUCHDB_URL;
const target = raw === undefined || raw === "" ? undefined : new URL(raw);
const loopback = target !== undefined && /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(target.hostname);

if (target === undefined || !loopback || raw === undefined) {
  const why = target === undefined ? "COUCHDB_URL is not set" : `COUCHDB_URL host ${target.hostname} is not a loopback address`;
  console.info(`daemon contract against CouchDB skipped: ${why} (run: COUCHDB_URL=http://admin:pass@127.0.0.1:5984 npx vitest run test/contract)`);
  describe.skip(`daemon contract: couchdb (${why})`, () => {
    it("needs COUCHDB_URL", () => undefined);
  });
} else {
  // Bigger dbs than on the memory store: CouchDB compacts a small db in milliseconds, and the
  // adoption scenario needs a compaction still running when upholster re-checks the db.
  daemonContract("couchdb", () => httpDaemonHarness(raw), { grow: { docs: 2000, rounds: 10 }, testTimeoutMs: 120_000 });
}
