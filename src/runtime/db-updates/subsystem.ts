/**
 * The composition of the db updates feed: config, service, HTTP routes.
 * The caller (src/index.ts / the CLI) feeds store events to
 * `service.handleStoreEvent` and mounts `routes` on upholster's HTTP server.
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

export interface DbUpdatesSubsystem {
  readonly service: DbUpdatesService;
  /** `/_db_updates`, plus `/_session` when the authenticator is the local one. */
  readonly routes: RouteHandler[];
  readonly config: DbUpdatesConfig;
  start(): Promise<void>;
  stop(): Promise<void>;
  metrics(): DbUpdatesMetrics;
}

const isLocal = (a: Authenticator | LocalAuthenticator): a is LocalAuthenticator => "login" in a && "issueCookie" in a;

export function createDbUpdatesSubsystem(options: DbUpdatesSubsystemOptions): DbUpdatesSubsystem {
  const { config, errors } = decodeDbUpdatesConfig(options.config, options.defaults);
  for (const e of errors) options.logger.warn({ section: e.section, key: e.key, value: e.value }, `ignoring bad config value: ${formatConfigError(e)}`);
  const service = createDbUpdatesService({ store: options.store, scheduler: options.scheduler, config, logger: options.logger });
  const routes: RouteHandler[] = [
    createDbUpdatesHandler({
      service,
      authenticator: options.authenticator,
      scheduler: options.scheduler,
      logger: options.logger,
      maxClientBufferBytes: config.maxClientBufferBytes,
      storeRetryMs: config.pollIntervalMs,
      drainTimeoutMs: config.clientDrainTimeoutMs,
    }),
  ];
  if (isLocal(options.authenticator)) routes.push(createSessionHandler(options.authenticator, options.scheduler));
  return {
    service,
    routes,
    config,
    start: () => service.start(),
    stop: () => service.stop(),
    metrics: () => service.metrics(),
  };
}
