/**
 * The indexing part of `upholster status`: read from `/_upholster/status`
 * (absent against CouchDB itself, which has no such endpoint: then nothing
 * is printed), decoded, and rendered as a summary line, a table of the
 * indexes (most behind first) and the deploys.
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import { renderTable } from "./table.js";

const Slot = t.type({ active: t.number, limit: t.number });
const IndexRow = t.intersection([
  t.type({ db: t.string, type: t.string, name: t.string, state: t.string, lag: t.union([t.number, t.null]), priority: t.string }),
  t.partial({ error: t.string }),
]);
const DeployRow = t.intersection([t.type({ db: t.string, ddoc: t.string, phase: t.string }), t.partial({ lag: t.number, indexes: t.number, error: t.string })]);
const IndexingC = t.type({
  mode: t.string,
  enabled: t.boolean,
  queue: t.type({ pending: t.number, queued: t.number, inspecting: t.number, retrying: t.number, waiting: t.number }),
  channels: t.type({ batch: Slot, incremental: Slot }),
  indexes: t.array(IndexRow),
  indexCount: t.number,
  deploys: t.array(DeployRow),
});
const UpholsterStatusC = t.type({ subsystems: t.partial({ indexing: IndexingC }) });

/** Shown at most in the table; the JSON status has up to 1000. */
const MAX_ROWS = 50;

/** The text to print, or undefined when the server has no indexing status (CouchDB, an older upholster). */
export function renderIndexingStatus(body: unknown): string | undefined {
  const decoded = UpholsterStatusC.decode(body);
  if (isLeft(decoded) || decoded.right.subsystems.indexing === undefined) return undefined;
  const s = decoded.right.subsystems.indexing;
  const lines = [
    `indexing (${s.enabled ? s.mode : "disabled"}): ${s.queue.pending} pending, ${s.queue.queued} queued, ${s.queue.inspecting} inspecting, ` +
      `${s.queue.waiting} waiting for a channel, ${s.queue.retrying} dbs retrying; ` +
      `builds: batch ${s.channels.batch.active}/${s.channels.batch.limit}, incremental ${s.channels.incremental.active}/${s.channels.incremental.limit}`,
  ];
  if (s.indexes.length > 0) {
    const rows = s.indexes.slice(0, MAX_ROWS).map((i) => [i.db, i.name, i.type, i.state, i.lag ?? "?", i.priority, i.error ?? ""]);
    lines.push(renderTable(["db", "index", "type", "state", "lag", "priority", "error"], rows));
    if (s.indexCount > MAX_ROWS) lines.push(`(${s.indexCount - MAX_ROWS} more indexes; the least behind are not shown)`);
  }
  for (const d of s.deploys) {
    const detail = [d.lag !== undefined ? `lag ${d.lag}` : undefined, d.indexes !== undefined ? `${d.indexes} indexes` : undefined, d.error].filter((x) => x !== undefined);
    lines.push(`deploy ${d.db} ${d.ddoc}: ${d.phase}${detail.length > 0 ? ` (${detail.join(", ")})` : ""}`);
  }
  return lines.join("\n");
}
