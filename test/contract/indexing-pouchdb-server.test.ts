/**
 * The indexing contract against a live PouchDB Server 4.2 (started by the
 * test): its `_info` is "Not implemented.", so views are built by blocking
 * queries and their progress is what the builds reached.
 */
import { startPouchDbServer } from "../support/pouchdb-server.js";
import { indexingContract } from "./indexing-contract.js";
import { httpIndexingHarness } from "./indexing-http-harness.js";

indexingContract(
  "pouchdb-server",
  async () => {
    const pouch = await startPouchDbServer();
    return httpIndexingHarness(pouch.url, { staleParam: "stale=ok", onClose: () => pouch.stop() });
  },
  { noProgress: "PouchDB Server answers _design/{ddoc}/_info with 'Not implemented.'", timeoutMs: 90_000 },
);
