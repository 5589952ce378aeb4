/**
 * One write of event keys into the feed db: one doc per key, updated in
 * place (CouchDB's global_changes docs carry only `_id` and `_rev`). A
 * conflict (someone else wrote the key, or our cached rev is stale) is
 * counted as `event_doc_conflict`, the doc re-read and the write retried.
 */
import type { DocumentStore, DocWrite } from "../../ports/store.js";
import type { RevCache } from "./rev-cache.js";

export interface WriteOutcome {
  /** Keys not written (the writer core retries them later). */
  readonly failed: readonly string[];
  readonly written: number;
  readonly conflicts: number;
  readonly error?: string | undefined;
}

/** Re-reads after conflicts within one write; beyond it the key goes back to the writer's back-off. */
const MAX_CONFLICT_ROUNDS = 3;
/** Parallel reads of current revisions (bounded: CouchDB should not see 1000 GETs at once). */
const READ_CONCURRENCY = 16;

export async function writeKeys(store: DocumentStore, db: string, keys: readonly string[], revs: RevCache): Promise<WriteOutcome> {
  let todo = [...keys];
  let written = 0;
  let conflicts = 0;
  let reread = new Set<string>();
  const failed: string[] = [];
  let lastError: string | undefined;
  for (let round = 0; round <= MAX_CONFLICT_ROUNDS && todo.length > 0; round++) {
    await readRevs(store, db, todo.filter((k) => reread.has(k) || revs.get(k) === undefined), revs);
    const docs: DocWrite[] = todo.map((key) => ({ _id: key, _rev: revs.get(key) }));
    const results = await store.bulkDocs(db, docs);
    const byId = new Map(results.map((r) => [r.id, r]));
    const retry: string[] = [];
    for (const key of todo) {
      const result = byId.get(key);
      if (result === undefined) {
        failed.push(key);
        lastError = `no result for ${key}`;
      } else if (result.ok) {
        revs.set(key, result.rev);
        written++;
      } else if (result.error === "conflict") {
        conflicts++;
        revs.forget(key);
        retry.push(key);
      } else {
        failed.push(key);
        lastError = `${result.error}${result.reason !== undefined ? `: ${result.reason}` : ""}`;
      }
    }
    todo = retry;
    reread = new Set(retry);
  }
  failed.push(...todo);
  return { failed, written, conflicts, error: lastError ?? (todo.length > 0 ? "conflict" : undefined) };
}

async function readRevs(store: DocumentStore, db: string, keys: readonly string[], revs: RevCache): Promise<void> {
  for (let i = 0; i < keys.length; i += READ_CONCURRENCY) {
    const slice = keys.slice(i, i + READ_CONCURRENCY);
    const docs = await Promise.all(slice.map((key) => store.getDoc(db, key)));
    slice.forEach((key, j) => {
      const doc = docs[j];
      if (doc !== undefined && typeof doc._rev === "string") revs.set(key, doc._rev);
      else revs.forget(key);
    });
  }
}
