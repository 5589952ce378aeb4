/**
 * The core's `list-dbs` and `list-design-docs` effects, answered as events.
 * A db's geo index files are listed with its design docs: they are index
 * files like view groups, and a rescan or `enqueue_all views` covers both.
 */
import type { ListPurpose, SmooshEvent } from "../../core/compaction/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { GeoIndexFiles } from "../../ports/geo.js";
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

export async function listDesignDocs(
  store: CompactionStore,
  db: string,
  purpose: ListPurpose,
  answer: (event: SmooshEvent) => void,
  geoFiles?: GeoIndexFiles,
): Promise<void> {
  const [ddocs, geo] = await Promise.allSettled([store.designDocs(db), geoFiles?.files(db)]);
  if (ddocs.status === "rejected") {
    answer({ type: "list-failed", purpose, db, error: errorText(ddocs.reason) });
    return;
  }
  // A geo failure must not cost the views their listing: they are answered, the failure is reported beside them.
  if (geo.status === "rejected") answer({ type: "list-failed", purpose, db, error: `geo index files: ${errorText(geo.reason)}` });
  const geoSignatures = geo.status === "fulfilled" && geo.value !== undefined ? geo.value.map((file) => file.signature) : undefined;
  answer({ type: "design-docs-listed", purpose, db, ddocs: ddocs.value.map((ddoc) => ddoc.id), ...(geoSignatures === undefined ? {} : { geoSignatures }) });
}
