/**
 * Queries as a priority signal: a `ViewStore` decorator that reports every
 * view query (the memory store's `_view` routes go through it) to whoever
 * connects, the indexer's `noteQuery`. Built before the indexer exists (the
 * routes are made with the store), so the listener is connected later.
 */
import type { ViewStore } from "../../ports/views.js";

export interface QueryTap {
  /** The ViewStore to hand to the query routes. */
  readonly views: ViewStore;
  connect(listener: (db: string, ddoc: string) => void): void;
}

export function tapViewQueries(views: ViewStore): QueryTap {
  let listener: ((db: string, ddoc: string) => void) | undefined;
  return {
    views: {
      queryView: (db, ddoc, view, query) => {
        try {
          listener?.(db, ddoc);
        } catch {
          // A listener's failure is not the query's.
        }
        return views.queryView(db, ddoc, view, query);
      },
      viewGroupInfo: (db, ddoc) => views.viewGroupInfo(db, ddoc),
      updateViewGroup: (db, ddoc) => views.updateViewGroup(db, ddoc),
    },
    connect(next) {
      listener = next;
    },
  };
}
