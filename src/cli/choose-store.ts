/**
 * Which store upholster runs against. Today: the in-memory store (the
 * embedded default, with an optional demo workload). The CouchDB adapter adds
 * a branch here (`--couch URL` / `COUCHDB_URL`); nothing else in `run`
 * needs to change.
 */
import type { UpholsterConfig } from "../config/load.js";
import type { EventSource } from "../ports/events.js";
import type { Logger, Scheduler } from "../ports/shell.js";
import type { Store } from "../ports/store.js";
import { createMemoryStore } from "../adapters/memory/index.js";
import { prepareDemo, type PreparedDemo } from "./demo.js";
import { createLocalAuthenticator, type Authenticator } from "../http/auth/index.js";

export interface StoreChoiceOptions {
  readonly config: UpholsterConfig;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
}

export interface StoreChoice {
  /** For the startup line: `memory`, `couchdb http://host:5984`, ... */
  readonly description: string;
  readonly store: Store;
  readonly events: EventSource;
  /** Present only where a demo makes sense (the in-memory store). */
  readonly prepareDemo?: () => PreparedDemo;
  /**
   * Who may read `/_db_updates`: on the in-memory store, the `[admins]`
   * section (CouchDB's password formats); against CouchDB, CouchDB's own
   * admins (asked through its `/_session`).
   */
  authenticator(): Promise<Authenticator>;
  /** Release the store's resources (connections) after upholster stopped. */
  close(): Promise<void>;
}

export async function chooseStore(options: StoreChoiceOptions): Promise<StoreChoice> {
  const { scheduler, logger } = options;
  const store = createMemoryStore({ scheduler });
  return {
    description: "memory (in-process; data is lost on exit)",
    store,
    events: store.createEventSource(),
    prepareDemo: () => prepareDemo({ store, scheduler, logger }),
    authenticator: () => createLocalAuthenticator({ config: options.config.ini, clock: scheduler, logger }),
    close: async () => undefined,
  };
}
