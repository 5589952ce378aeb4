/** The core's `list-dbs` and `list-design-docs` effects, answered as events. */
import type { ListPurpose, SmooshEvent } from "../../core/compaction/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { CompactionStore } from "../../ports/store.js";

export async function listDbs(store: CompactionStore, purpose: ListPurpose, answer: (event: SmooshEvent) => void): Promise<void> {
  let dbs: string[];
  try {
    dbs = await store.listDbs();
  } catch (error) {
    answer({ type: "list-failed", purpose, error: errorText(error) });
    return;
  }
  answer({ type: "dbs-listed", purpose, dbs });
}

export async function listDesignDocs(store: CompactionStore, db: string, purpose: ListPurpose, answer: (event: SmooshEvent) => void): Promise<void> {
  let ddocs: string[];
  try {
    ddocs = (await store.designDocs(db)).map((ddoc) => ddoc.id);
  } catch (error) {
    answer({ type: "list-failed", purpose, db, error: errorText(error) });
    return;
  }
  answer({ type: "design-docs-listed", purpose, db, ddocs });
}
