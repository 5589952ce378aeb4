/**
 * The line of `upholster status` about CouchDB's own smoosh and ken (the
 * `couchdb` entry's `serverDaemons` in `/_upholster/status`): whether they
 * run beside upholster, so an operator sees it where they look at the
 * queues, not only in the log. Nothing on the memory store or PouchDB
 * Server, or against CouchDB itself (no `/_upholster/status`).
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import { ServerDaemonsStatusC } from "../adapters/couchdb-http/server-daemons-watch.js";

const UpholsterStatusC = t.type({ subsystems: t.partial({ couchdb: t.partial({ serverDaemons: ServerDaemonsStatusC }) }) });

export function renderServerDaemons(body: unknown): string | undefined {
  const decoded = UpholsterStatusC.decode(body);
  if (isLeft(decoded)) return undefined;
  const daemons = decoded.right.subsystems.couchdb?.serverDaemons;
  if (daemons === undefined) return undefined;
  switch (daemons.state) {
    case "pending":
      return "CouchDB's own smoosh and ken: not read yet";
    case "unknown":
      return `CouchDB's own smoosh and ken: unknown (${daemons.reason ?? "no reason given"})`;
    case "known": {
      const lines: string[] = [];
      if (daemons.smoosh === "on") {
        lines.push(`CouchDB's own smoosh runs beside upholster's compaction (${(daemons.smooshChannels ?? []).join(", ")}): set each channel's concurrency = 0 in CouchDB (docs/couchdb.md)`);
      }
      if (daemons.ken === "on") lines.push("CouchDB's own ken runs beside upholster's indexing: set [ken] batch_channels = 0 and incremental_channels = 0 in CouchDB");
      return lines.length > 0 ? lines.join("\n") : "CouchDB's own smoosh and ken: off";
    }
    case "not-couchdb":
      return undefined;
  }
}
