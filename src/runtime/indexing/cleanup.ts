/**
 * `cleanup-indexes`: every backend's `cleanup(db, designDocs)` (the RFC's
 * `cleanup_indices`), each on its own: one failing is reported, the others
 * still run.
 */
import type { IndexingEffect, IndexingEvent } from "../../core/indexing/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { BackendRegistry } from "./registry.js";

type CleanupEffect = Extract<IndexingEffect, { type: "cleanup-indexes" }>;

export async function cleanUpIndexes(registry: BackendRegistry, effect: CleanupEffect): Promise<IndexingEvent> {
  const outcomes = await Promise.allSettled(registry.all().map((backend) => backend.cleanup(effect.db, effect.designDocs)));
  const failures = outcomes.flatMap((outcome, i) => (outcome.status === "rejected" ? [`${registry.all()[i]?.type ?? "?"}: ${errorText(outcome.reason)}`] : []));
  return { type: "cleanup-done", requestId: effect.requestId, db: effect.db, ...(failures.length > 0 ? { error: failures.join("; ") } : {}) };
}
