/**
 * Views on CouchDB over HTTP. A build triggers the view group's update
 * without waiting for it and follows it:
 *
 * - `GET /{db}/_design/{ddoc}/_info` first: already at the target, done;
 *   `updater_running` (a query, another builder, CouchDB's own ken is
 *   updating it), not triggered again (CouchDB issue 5710): followed;
 * - else `GET .../_view/{view}?update=lazy&limit=0`: CouchDB 3.4.3 answers at
 *   once (1.3 ms, fixture 57) and updates the group in the background;
 * - then `_info` again, every 100 ms doubling to 2 s, until `update_seq`
 *   reaches the target (re-triggered if the updater stopped short).
 *
 * `_info`'s `update_seq` is the sum of the shards' index seqs, comparable
 * to the db seq's numeric part; `updates_pending.total` is how far behind it
 * is, so the db seq at the end is `update_seq + total`. Requests per build:
 * one `_info`, one trigger and one `_info` per poll.
 *
 * PouchDB Server answers `_info` with "Not implemented.": there a build is a
 * blocking `_view?limit=0&update_seq=true` (PouchDB builds before answering)
 * and progress is unknown.
 *
 * Only the replicas a request reaches are built (a clustered query reads one
 * copy of each range); CouchDB's own ken builds every shard on every node.
 */
import * as t from "io-ts";
import { viewIndexesOf } from "../../../core/indexing/index.js";
import type { BuildOptions, BuildResult, IndexBackend, IndexSpec } from "../../../ports/index-backend.js";
import type { Logger, Scheduler } from "../../../ports/shell.js";
import { decodeBody, ViewInfoBody } from "../decoders.js";
import { CouchHttpError } from "../errors.js";
import { dbPath, docPath } from "../mapping.js";
import { seqNumber } from "../seq.js";
import type { CouchHttp } from "./features.js";
import { nextPollMs, pause } from "./poll.js";

export interface PollSettings {
  readonly minMs: number;
  readonly maxMs: number;
}

export interface CouchViewsDeps {
  readonly http: CouchHttp;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly poll: PollSettings;
}

interface ViewProgress {
  readonly indexSeq: number;
  readonly updating: boolean;
  readonly waitingClients: number;
  /** The db seq as the server saw it (index seq + pending), when it said. */
  readonly dbSeq: number | undefined;
}

const QueryUpdateSeq = t.partial({ update_seq: t.union([t.string, t.number]) });

const ddocPath = (db: string, ddoc: string): string => `${dbPath(db)}${docPath(ddoc)}`;

export function couchViewsBackend(deps: CouchViewsDeps): IndexBackend {
  const { http } = deps;

  /** undefined: the design doc is gone; "not-implemented": PouchDB Server. */
  const readInfo = async (db: string, ddoc: string): Promise<ViewProgress | "not-implemented" | undefined> => {
    const path = `${ddocPath(db, ddoc)}/_info`;
    const res = await http.call({ method: "GET", path, accept: [404] });
    if (res.status === 404) return undefined;
    const view = decodeBody(ViewInfoBody, res.body, `GET ${path}`).view_index;
    if (typeof view === "string") return "not-implemented";
    const indexSeq = view.update_seq === undefined ? 0 : (seqNumber(view.update_seq) ?? 0);
    const pending = view.updates_pending?.total;
    return { indexSeq, updating: view.updater_running === true, waitingClients: view.waiting_clients ?? 0, dbSeq: pending === undefined ? undefined : indexSeq + pending };
  };

  const viewPath = (db: string, index: IndexSpec): string => `${ddocPath(db, index.ddocs[0]!)}/_view/${encodeURIComponent(index.entry)}`;

  const trigger = async (db: string, index: IndexSpec): Promise<void> => {
    await http.call({ method: "GET", path: viewPath(db, index), query: { update: "lazy", limit: 0 } });
  };

  const blockingBuild = async (db: string, index: IndexSpec, targetSeq: number): Promise<BuildResult> => {
    const path = viewPath(db, index);
    const res = await http.call({ method: "GET", path, query: { limit: 0, update_seq: true } });
    const seq = decodeBody(QueryUpdateSeq, res.body, `GET ${path}`).update_seq;
    const reached = seq === undefined ? undefined : seqNumber(seq);
    return { indexSeq: Math.max(targetSeq, reached ?? 0) };
  };

  const gone = (db: string, index: IndexSpec): CouchHttpError =>
    new CouchHttpError(`GET ${ddocPath(db, index.ddocs[0]!)}/_info`, 404, "not_found", "the design doc is gone");

  const build = async (db: string, index: IndexSpec, options: BuildOptions): Promise<BuildResult> => {
    let info = await readInfo(db, index.ddocs[0]!);
    if (info === "not-implemented") return blockingBuild(db, index, options.targetSeq);
    let waitMs = deps.poll.minMs;
    let lastSeq = -1;
    for (;;) {
      if (info === undefined || info === "not-implemented") throw gone(db, index);
      if (info.indexSeq > lastSeq) {
        lastSeq = info.indexSeq;
        options.onProgress?.(info.indexSeq);
      }
      if (info.indexSeq >= options.targetSeq) return { indexSeq: info.indexSeq, dbSeq: info.dbSeq };
      if (!info.updating) await trigger(db, index);
      await pause(deps.scheduler, waitMs, options.signal);
      waitMs = nextPollMs(waitMs, deps.poll.maxMs);
      info = await readInfo(db, index.ddocs[0]!);
    }
  };

  return {
    type: "views",
    field: "views",
    indexesOf: (_db, designDocs) => viewIndexesOf(designDocs),
    build,
    async progress(db, index) {
      const info = await readInfo(db, index.ddocs[0]!);
      if (info === undefined) throw gone(db, index);
      if (info === "not-implemented") return undefined;
      return { indexSeq: info.indexSeq, updating: info.updating, waitingClients: info.waitingClients };
    },
    async cleanup(db) {
      await http.call({ method: "POST", path: `${dbPath(db)}/_view_cleanup`, json: true });
    },
  };
}
