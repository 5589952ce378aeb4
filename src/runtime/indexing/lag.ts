/**
 * An index's lag, asked live (the library's `lag(db, ddoc?)` and
 * `GET /_upholster/indexing/lag`): the db's seq now, every backend's
 * indexes of the db (or of one design doc) and where each stands now.
 * Status shows what the core last learnt instead, without a request.
 */
import { refusalOf, type ListedDesignDoc } from "../../core/indexing/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { InspectStore } from "./inspect.js";
import type { BackendRegistry } from "./registry.js";

export interface IndexLag {
  readonly type: string;
  readonly name: string;
  readonly ddocs: readonly string[];
  readonly dbSeq: number;
  /** null: the backend cannot tell (or failed to: `error`). */
  readonly indexSeq: number | null;
  readonly lag: number | null;
  readonly updating: boolean;
  /** Whether the background indexer keeps it up to date (autoupdate, language). */
  readonly autoUpdate: boolean;
  readonly error?: string;
}

/** Thrown when the db does not exist (the HTTP route answers CouchDB's 404). */
export class DbNotFoundError extends Error {
  override readonly name = "DbNotFoundError";
  readonly transient = false;
}

export async function liveLag(store: InspectStore, registry: BackendRegistry, languages: ReadonlySet<string>, db: string, ddoc?: string): Promise<IndexLag[]> {
  await registry.ready();
  const info = await store.dbInfo(db);
  if (info === undefined) throw new DbNotFoundError(`database ${JSON.stringify(db)} does not exist`);
  const listed: ListedDesignDoc[] = (await store.designDocs(db)).map((d) => ({ id: d.id, body: d.body }));
  const designDocs = ddoc === undefined ? listed : listed.filter((d) => d.id === ddoc);
  const byId = new Map(listed.map((d) => [d.id, d]));
  const lags: Promise<IndexLag>[] = [];
  for (const backend of registry.all()) {
    for (const spec of backend.indexesOf(db, designDocs).indexes) {
      const autoUpdate = spec.ddocs.some((id) => refusalOf(byId.get(id), spec.field, languages) === undefined);
      const base = { type: spec.type, name: spec.name, ddocs: spec.ddocs, dbSeq: info.updateSeqNumber, autoUpdate };
      lags.push(
        backend.progress(db, spec).then(
          (progress): IndexLag =>
            progress === undefined
              ? { ...base, indexSeq: null, lag: null, updating: false }
              : { ...base, indexSeq: progress.indexSeq, lag: Math.max(0, info.updateSeqNumber - progress.indexSeq), updating: progress.updating },
          (error: unknown): IndexLag => ({ ...base, indexSeq: null, lag: null, updating: false, error: errorText(error) }),
        ),
      );
    }
  }
  return Promise.all(lags);
}
