/**
 * The db updates feed (global_changes, `/_db_updates`) as one of upholster's
 * subsystems: events fanned out to its service, its routes mounted.
 */
import type { IniSections } from "../core/shared/ini.js";
import type { Authenticator } from "../http/auth/types.js";
import type { LocalAuthenticator } from "../http/auth/local-authenticator.js";
import type { Logger, Scheduler } from "../ports/shell.js";
import type { DocumentStore } from "../ports/store.js";
import { createDbUpdatesSubsystem } from "./db-updates/index.js";
import type { Subsystem } from "./subsystem.js";

export interface DbUpdatesSubsystemDeps {
  readonly store: DocumentStore;
  readonly scheduler: Scheduler;
  readonly ini: IniSections;
  readonly logger: Logger;
  readonly authenticator: Authenticator | LocalAuthenticator;
}

export function dbUpdatesSubsystem(deps: DbUpdatesSubsystemDeps): Subsystem {
  const logger = deps.logger.child?.({ subsystem: "db_updates" }) ?? deps.logger;
  const feed = createDbUpdatesSubsystem({ store: deps.store, scheduler: deps.scheduler, config: deps.ini, logger, authenticator: deps.authenticator });
  return {
    name: "db_updates",
    start: () => feed.start(),
    stop: () => feed.stop(),
    handleStoreEvent: (event) => feed.service.handleStoreEvent(event),
    routes: feed.routes,
    status: () => ({ feedDb: feed.service.feedDbName }),
    metrics: () => feed.metrics(),
  };
}
