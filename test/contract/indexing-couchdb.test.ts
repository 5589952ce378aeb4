/**
 * The indexing contract against a real CouchDB named by COUCHDB_URL
 * (loopback only). Meant for a server with its own ken off
 * (`[ken] batch_channels = 0`, `incremental_channels = 0`), so what builds
 * is upholster; with ken on the scenarios still hold (ken builds too).
 * Skipped, with a message, when COUCHDB_URL is not set.
 */
import { describe, it } from "vitest";
import { indexingContract } from "./indexing-contract.js";
import { httpIndexingHarness } from "./indexing-http-harness.js";

const raw = process.env.COUCHDB_URL;
const target = raw === undefined || raw === "" ? undefined : new URL(raw);
const loopback = target !== undefined && /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(target.hostname);

if (target === undefined || !loopback || raw === undefined) {
  const why = target === undefined ? "COUCHDB_URL is not set" : `COUCHDB_URL host ${target.hostname} is not a loopback address`;
  console.info(`indexing contract against CouchDB skipped: ${why}`);
  describe.skip(`indexing contract: couchdb (${why})`, () => {
    it("needs COUCHDB_URL", () => undefined);
  });
} else {
  indexingContract("couchdb", () => httpIndexingHarness(raw, { staleParam: "update=false" }));
}
