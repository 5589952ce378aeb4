/**
 * A CouchDB whose `[chttpd] max_db_number_for_dbs_info_req` is below the 100
 * keys upholster sends by default: on the real server of COUCHDB_URL (set
 * there for the test through `_node/_local/_config`, then removed), the
 * store learns the exact limit from its answers, and one told the
 * limit (`dbsInfoMaxKeys`) never asks for more. Loopback replay tests of the
 * same rules are in store.test.ts.
 */
import { describe, expect, it } from "vitest";
import { createCouchStore } from "../../../src/adapters/couchdb-http/index.js";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import { couchRequest, liveCouchUrl } from "../../support/live-couch.js";

const LIMIT_PATH = "/_node/_local/_config/chttpd/max_db_number_for_dbs_info_req";
const SERVER_LIMIT = 7;

describe.skipIf(liveCouchUrl === undefined)("POST /_dbs_info on a real CouchDB with a lower max_db_number_for_dbs_info_req (COUCHDB_URL)", () => {
  it("too_many_keys narrows the batch to the server's limit; every db is read; told the limit, no request is refused", async () => {
    const prefix = `dbs-info-limit-${Date.now().toString(36)}-`;
    const dbs = Array.from({ length: 20 }, (_, i) => `${prefix}${String(i).padStart(2, "0")}`);
    const learningLogger = createRecordingLogger();
    const learning = createCouchStore({ url: liveCouchUrl ?? "", logger: learningLogger, state: createMemoryStatePort() });
    const logger = createRecordingLogger();
    const told = createCouchStore({ url: liveCouchUrl ?? "", logger, state: createMemoryStatePort(), dbsInfoMaxKeys: SERVER_LIMIT });
    try {
      for (const db of dbs) await learning.store.ensureDb(db);
      await couchRequest("PUT", LIMIT_PATH, String(SERVER_LIMIT));
      expect(await couchRequest("POST", "/_dbs_info", { keys: dbs.slice(0, SERVER_LIMIT + 1) })).toEqual({ error: "bad_request", reason: "too_many_keys" });

      const infos = await learning.store.dbInfos?.(dbs);
      expect([...(infos?.keys() ?? [])].sort()).toEqual(dbs);
      // 20 and 10 refused, 5 and 7 taken, 8 refused: the server's limit, exactly.
      expect(learning.store.dbInfosBatchSize).toBe(SERVER_LIMIT);
      expect(learningLogger.lines.filter((l) => l.level === "warn")).toHaveLength(1);
      expect(learningLogger.lines.filter((l) => l.msg.startsWith("learnt CouchDB's POST /_dbs_info key limit")).map((l) => l.fields["keysPerRequest"])).toEqual([SERVER_LIMIT]);

      const toldInfos = await told.store.dbInfos?.(dbs);
      expect([...(toldInfos?.keys() ?? [])].sort()).toEqual(dbs);
      expect(told.store.dbInfosBatchSize).toBe(SERVER_LIMIT);
      expect(logger.lines.filter((l) => l.level === "warn")).toEqual([]);
    } finally {
      await couchRequest("DELETE", LIMIT_PATH).catch(() => undefined);
      for (const db of dbs) await couchRequest("DELETE", `/${encodeURIComponent(db)}`);
      await learning.close();
      await told.close();
    }
  });
});
