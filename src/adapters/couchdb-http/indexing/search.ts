/**
 * Full-text indexes on CouchDB over HTTP: dreyfus search (`indexes` in a
 * design doc, `_search`, Clouseau) and nouveau (`nouveau`, `_nouveau`).
 * Both exist only where the server has them: `GET /` lists the feature
 * (`search`, `nouveau`). Where it does not (CouchDB 3.4.3 here: `_search`
 * answers 503 "Search is not available", `_nouveau` 404), one log line says
 * so and the backend finds no indexes: nothing is tried, nothing fails.
 *
 * A search index is built only by a query, which waits for it (CouchDB
 * offers no lazy trigger for them): a build is `GET .../_search/{index}?q=*:*&limit=1`
 * (and `_nouveau`), then the info endpoint gives the seq reached.
 * Cleanup: `POST /{db}/_search_cleanup` / `_nouveau_cleanup`.
 */
import * as t from "io-ts";
import { namedIndexesOf } from "../../../core/indexing/index.js";
import type { IndexBackend, IndexSpec } from "../../../ports/index-backend.js";
import type { Logger } from "../../../ports/shell.js";
import { decodeBody } from "../decoders.js";
import { CouchHttpError } from "../errors.js";
import { dbPath, docPath } from "../mapping.js";
import { seqNumber } from "../seq.js";
import type { CouchHttp, FeatureProbe } from "./features.js";

export interface FullTextFlavour {
  readonly type: "search" | "nouveau";
  /** The design doc member and `autoupdate` key. */
  readonly field: string;
  /** The `GET /` feature that says the server has it. */
  readonly feature: string;
  readonly query: string;
  readonly info: string;
  readonly cleanup: string;
  /** The seq the index has reached, from its info body. */
  readonly seqOf: (info: { readonly [key: string]: unknown }) => number | undefined;
  readonly label: string;
}

const numberAt = (info: { readonly [key: string]: unknown }, key: string): number | undefined => {
  const value = info[key];
  return typeof value === "number" || typeof value === "string" ? seqNumber(value) : undefined;
};

/** dreyfus: `_search_info` says `pending_seq` (indexed, committed or not) and `committed_seq`. */
export const DREYFUS: FullTextFlavour = {
  type: "search",
  field: "indexes",
  feature: "search",
  query: "_search",
  info: "_search_info",
  cleanup: "_search_cleanup",
  seqOf: (info) => numberAt(info, "pending_seq") ?? numberAt(info, "committed_seq"),
  label: "search (dreyfus)",
};

/** nouveau: `_nouveau_info` says `update_seq`. */
export const NOUVEAU: FullTextFlavour = {
  type: "nouveau",
  field: "nouveau",
  feature: "nouveau",
  query: "_nouveau",
  info: "_nouveau_info",
  cleanup: "_nouveau_cleanup",
  seqOf: (info) => numberAt(info, "update_seq"),
  label: "nouveau",
};

const InfoBody = t.type({ search_index: t.record(t.string, t.unknown) });

export interface FullTextDeps {
  readonly http: CouchHttp;
  readonly features: FeatureProbe;
  readonly logger: Logger;
}

export function couchFullTextBackend(flavour: FullTextFlavour, deps: FullTextDeps): IndexBackend {
  let available: boolean | undefined;
  let told = false;
  const unavailable = (why: string): void => {
    available = false;
    if (told) return;
    told = true;
    deps.logger.info({ backend: flavour.type, why }, `${flavour.label} is not available on this server: its indexes are skipped`);
  };
  const indexPath = (db: string, index: IndexSpec, endpoint: string): string =>
    `${dbPath(db)}${docPath(index.ddocs[0]!)}/${endpoint}/${encodeURIComponent(index.entry)}`;

  const seqOf = async (db: string, index: IndexSpec): Promise<number | undefined> => {
    const path = indexPath(db, index, flavour.info);
    const res = await deps.http.call({ method: "GET", path });
    return flavour.seqOf(decodeBody(InfoBody, res.body, `GET ${path}`).search_index);
  };

  /** The server said it has no such service after all (503 "Search is not available", 404 on the endpoint). */
  const noService = (error: unknown): boolean =>
    error instanceof CouchHttpError && (error.status === 503 || (error.status === 404 && error.reason !== "missing" && error.reason !== "deleted"));

  return {
    type: flavour.type,
    field: flavour.field,
    async start() {
      const features = await deps.features.features();
      if (features.has(flavour.feature)) available = true;
      else unavailable(`GET / does not list the "${flavour.feature}" feature`);
    },
    indexesOf: (_db, designDocs) => (available === true ? namedIndexesOf(flavour.type, flavour.field, designDocs) : { indexes: [], problems: [] }),
    async build(db, index, options) {
      try {
        await deps.http.call({ method: "GET", path: indexPath(db, index, flavour.query), query: { q: "*:*", limit: 1 } });
        const indexSeq = await seqOf(db, index);
        return { indexSeq: Math.max(indexSeq ?? 0, options.targetSeq) };
      } catch (error) {
        if (noService(error)) unavailable(String(error));
        throw error;
      }
    },
    async progress(db, index) {
      const indexSeq = await seqOf(db, index);
      return indexSeq === undefined ? undefined : { indexSeq, updating: false };
    },
    async cleanup(db) {
      if (available !== true) return;
      await deps.http.call({ method: "POST", path: `${dbPath(db)}/${flavour.cleanup}`, json: true });
    },
    status: () => ({ available: available ?? "unknown" }),
  };
}
