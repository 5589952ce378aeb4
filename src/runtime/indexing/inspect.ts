/**
 * `inspect-db`: the db's seq, its design docs (bodies), which indexes every
 * backend finds in them and where each stands. A store call that fails
 * fails the inspection (retried by the core); a backend that fails is only
 * that backend's indexes going without progress (or without discovery),
 * logged: one broken backend never stops the others.
 */
import type { IndexingEvent, InspectedIndex, IndexProblem, ListedDesignDoc } from "../../core/indexing/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { IndexBackend } from "../../ports/index-backend.js";
import type { Logger } from "../../ports/shell.js";
import type { CompactionStore } from "../../ports/store.js";
import { isTransient } from "./errors.js";
import type { BackendRegistry } from "./registry.js";

export type InspectStore = Pick<CompactionStore, "dbInfo" | "designDocs">;

export interface InspectDeps {
  readonly store: InspectStore;
  readonly registry: BackendRegistry;
  readonly logger: Logger;
}

const discover = (backend: IndexBackend, db: string, designDocs: readonly ListedDesignDoc[], logger: Logger) => {
  try {
    return backend.indexesOf(db, designDocs);
  } catch (error) {
    logger.error({ backend: backend.type, db, err: errorText(error) }, "ken: a backend failed to read design docs; its indexes are skipped");
    return { indexes: [], problems: [] };
  }
};

const withProgress = async (backend: IndexBackend, db: string, spec: InspectedIndex["spec"]): Promise<InspectedIndex> => {
  try {
    return { spec, progress: await backend.progress(db, spec) };
  } catch (error) {
    return { spec, progressError: errorText(error) };
  }
};

/** Everything about one db, as one event. */
export async function inspectDb(deps: InspectDeps, requestId: number, db: string): Promise<IndexingEvent> {
  try {
    await deps.registry.ready();
    const info = await deps.store.dbInfo(db);
    if (info === undefined) return { type: "db-missing", requestId, db };
    const designDocs: ListedDesignDoc[] = (await deps.store.designDocs(db)).map((ddoc) => ({ id: ddoc.id, body: ddoc.body }));
    const indexes: Promise<InspectedIndex>[] = [];
    const problems: IndexProblem[] = [];
    for (const backend of deps.registry.all()) {
      const found = discover(backend, db, designDocs, deps.logger);
      problems.push(...found.problems);
      for (const spec of found.indexes) indexes.push(withProgress(backend, db, spec));
    }
    return { type: "db-inspected", requestId, db, dbSeq: info.updateSeqNumber, designDocs, indexes: await Promise.all(indexes), problems };
  } catch (error) {
    return { type: "inspect-failed", requestId, db, error: errorText(error), transient: isTransient(error) };
  }
}
