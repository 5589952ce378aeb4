/**
 * The db updates feed (global_changes, `/_db_updates`) as one of upholster's
 * subsystems: config, service, HTTP routes. Store events reach the service
 * through `handleStoreEvent`; `routes` are mounted on upholster's server.
 */
import { formatConfigError, type IniSections } from "../../core/shared/ini.js";
import { decodeDbUpdatesConfig, type DbUpdatesConfig } from "../../core/db-updates/index.js";
import type { Logger, Scheduler } from "../../ports/shell.js";
import type { DocumentStore } from "../../ports/store.js";
import type { RouteHandler } from "../../http/types.js";
import type { Authenticator } from "../../http/auth/types.js";
import type { LocalAuthenticator } from "../../http/auth/local-authenticator.js";
import { createSessionHandler } from "../../http/auth/session-handler.js";
import { createDbUpdatesHandler } from "../../http/db-updates/handler.js";
import type { Subsystem } from "../subsystem.js";
import { createDbUpdatesService, type DbUpdatesMetrics, type DbUpdatesService } from "./service.js";

export interface DbUpdatesSubsystemOptions {
  readonly store: DocumentStore;
  readonly scheduler: Scheduler;
  /** All INI sections; `[global_changes]` is read. */
  readonly config: IniSections;
  readonly logger: Logger;
  readonly authenticator: Authenticator | LocalAuthenticator;
  /** Base defaults before the INI (e.g. `COUCHDB_DEFAULTS` for CouchDB's timing). Default `UPHOLSTER_DEFAULTS`. */
  readonly defaults?: DbUpdatesConfig;
}

export interface DbUpdatesSubsystem extends Subsystem {
  readonly service: DbUpdatesService;
  /** `/_db_updates`, plus `/_session` when the authenticator is the local one. */
  readonly routes: RouteHandler[];
  readonly config: DbUpdatesConfig;
  metrics(): DbUpdatesMetrics;
}

const isLocal = (a: Authenticator | LocalAuthenticator): a is LocalAuthenticator => "login" in a && "issueCookie" in a;

export function dbUpdatesSubsystem(options: DbUpdatesSubsystemOptions): DbUpdatesSubsystem {
  const logger = options.logger.child?.({ subsystem: "db_updates" }) ?? options.logger;
  const { config, errors } = decodeDbUpdatesConfig(options.config, options.defaults);
  for (const e of errors) logger.warn({ section: e.section, key: e.key, value: e.value }, `ignoring bad config value: ${formatConfigError(e)}`);
  const service = createDbUpdatesService({ store: options.store, scheduler: options.scheduler, config, logger });
  const routes: RouteHandler[] = [
    createDbUpdatesHandler({
      service,
      authenticator: options.authenticator,
      scheduler: options.scheduler,
      logger,
      maxClientBufferBytes: config.maxClientBufferBytes,
      storeRetryMs: config.pollIntervalMs,
      drainTimeoutMs: config.clientDrainTimeoutMs,
    }),
  ];
  if (isLocal(options.authenticator)) routes.push(createSessionHandler(options.authenticator, options.scheduler));
  return {
    name: "db_updates",
    service,
    routes,
    config,
    start: () => service.start(),
    stop: () => service.stop(),
    handleStoreEvent: (event) => service.handleStoreEvent(event),
    status: () => ({ feedDb: service.feedDbName }),
    metrics: () => service.metrics(),
  };
}
