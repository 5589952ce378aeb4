/**
 * A CouchDB that takes fewer `POST /_dbs_info` keys than upholster was told:
 * on the real server of COUCHDB_URL, at its default `[chttpd]
 * max_db_number_for_dbs_info_req` (100), a store configured for 1,000
 * (`dbsInfoMaxKeys`) learns the limit from the too_many_keys answers, and
 * one told the right number is never refused. The server's config is left
 * alone: the suites run side by side, and a lower limit would change what
 * the others see. Loopback tests of the same rules are in store.test.ts.
 */
import { describe, expect, it } from "vitest";
import { createCouchStore } from "../../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import { couchRequest, liveCouchUrl } from "../../support/live-couch.js";

/** CouchDB 3.4.3's default `[chttpd] max_db_number_for_dbs_info_req`. */
const SERVER_LIMIT = 100;

describe.skipIf(liveCouchUrl === undefined)("POST /_dbs_info on a real CouchDB, asked for more keys than it takes (COUCHDB_URL)", () => {
  it("too_many_keys narrows the batch to the server's exact limit; every db is read; told the limit, no request is refused", async () => {
    const prefix = `dbs-info-limit-${Date.now().toString(36)}-`;
    const dbs = Array.from({ length: 130 }, (_, i) => `${prefix}${String(i).padStart(3, "0")}`);
    const learningLogger = createRecordingLogger();
    const learning = createCouchStore({ url: liveCouchUrl ?? "", logger: learningLogger, state: createMemoryStatePort(), dbsInfoMaxKeys: 1_000 });
    const toldLogger = createRecordingLogger();
    const told = createCouchStore({ url: liveCouchUrl ?? "", logger: toldLogger, state: createMemoryStatePort(), dbsInfoMaxKeys: SERVER_LIMIT });
    try {
      for (const db of dbs) await couchRequest("PUT", `/${encodeURIComponent(db)}?q=1`);
      expect(await couchRequest("POST", "/_dbs_info", { keys: dbs.slice(0, SERVER_LIMIT + 1) })).toEqual({ error: "bad_request", reason: "too_many_keys" });

      // The checks of a daemon: the same dbs read again and again, until the store says it knows the limit.
      const learnt = () => learningLogger.lines.filter((l) => l.msg.startsWith("learnt CouchDB's POST /_dbs_info key limit"));
      for (let round = 0; round < 10 && learnt().length === 0; round++) {
        const infos = await learning.store.dbInfos?.(dbs);
        expect([...(infos?.keys() ?? [])].sort()).toEqual(dbs);
      }
      expect(learning.store.dbInfosBatchSize).toBe(SERVER_LIMIT);
      expect(learningLogger.lines.filter((l) => l.level === "warn")).toHaveLength(1);
      expect(learnt().map((l) => l.fields["keysPerRequest"])).toEqual([SERVER_LIMIT]);

      const toldInfos = await told.store.dbInfos?.(dbs);
      expect([...(toldInfos?.keys() ?? [])].sort()).toEqual(dbs);
      expect(told.store.dbInfosBatchSize).toBe(SERVER_LIMIT);
      expect(toldLogger.lines.filter((l) => l.level === "warn")).toEqual([]);
    } finally {
      for (const db of dbs) await couchRequest("DELETE", `/${encodeURIComponent(db)}`);
      await learning.close();
      await told.close();
    }
  }, 60_000);
});
