/**
 * The composition root: one store, one event source, the subsystems, and
 * (optionally) the HTTP server. Embedders call `createUpholster`; the CLI is a
 * thin layer over it.
 */
import { isLeft } from "fp-ts/lib/Either.js";
import type { SmooshMetrics, SmooshStatus } from "../core/compaction/index.js";
import { formatConfigError, type ConfigError, type IniSections } from "../core/shared/ini.js";
import { decodeConfig, isUpholsterConfig, type UpholsterConfig } from "../config/load.js";
import { createHttpServer, type HttpAddress, type HttpServer } from "../http/server.js";
import { serverRoutes } from "../http/server-routes.js";
import { nodeRoutes } from "../http/node-routes.js";
import type { Authenticator } from "../http/auth/types.js";
import { createGuard, type Guard } from "../http/auth/guard.js";
import { createLocalAuthenticator, isLocalAuthenticator } from "../http/auth/local-authenticator.js";
import { createSessionHandler } from "../http/auth/session-handler.js";
import { isLoopbackHost, UNPROTECTED_WARNING, UnprotectedServerError } from "../http/auth/exposure.js";
import type { RouteHandler } from "../http/types.js";
import { formatConfigWarning } from "../config/unknown-keys.js";
import type { EventSource, EventSourceStatus, StoreEvent } from "../ports/events.js";
import type { Logger, Scheduler, StatePort } from "../ports/shell.js";
import type { CompactionStore } from "../ports/store.js";
import { errorText } from "../core/shared/error-text.js";
import { createPinoLogger } from "../adapters/logging/index.js";
import type { CompactionDaemon } from "./compaction/daemon.js";
import { compactionSubsystem } from "./compaction/subsystem.js";
import { indexingSubsystem, type IndexingSubsystemOptions } from "./indexing/subsystem.js";
import type { IndexingDaemon } from "./indexing/daemon.js";
import { geoSubsystem, type GeoSubsystem, type GeoSubsystemOptions } from "./geo/subsystem.js";
import { realScheduler } from "./scheduler.js";
import type { Subsystem } from "./subsystem.js";

export interface UpholsterOptions {
  readonly store: CompactionStore;
  /** What happens in the store. Its single listener is fanned out to every subsystem. */
  readonly events: EventSource;
  /** CouchDB-style INI sections (decoded here; throws InvalidConfigError) or a config from `loadConfig`. Default: all defaults. */
  readonly config?: IniSections | UpholsterConfig;
  /** Default: wall time. Pass a VirtualScheduler to simulate. */
  readonly scheduler?: Scheduler;
  /** Default: pino on stdout at `[upholster] log_level`. */
  readonly logger?: Logger;
  /** Where smoosh checkpoints its queues when `[smoosh] persist = true`. */
  readonly state?: StatePort;
  /** Serve the HTTP API. Absent: no server (library use). Port 0 picks a free port. */
  readonly http?: HttpOptions;
  /**
   * More subsystems, after smoosh: they hear every store event and their
   * routes are mounted. The db updates feed is added this way (see
   * `dbUpdatesSubsystem`), as ken and hastings will be.
   */
  readonly subsystems?: readonly Subsystem[];
  /**
   * Background indexing (ken), configured by `[ken]` and `[fabric]
   * index_updater_*`: on by default. Its backends: the store's own views
   * when it has a view engine (the memory store), plus `backends` (CouchDB's:
   * `createCouchIndexBackends`); more with `upholster.indexing.registerBackend`.
   */
  readonly indexing?: IndexingSubsystemOptions;
  /**
   * Geo indexes (hastings `st_indexes`, `_geo`), on every store, configured
   * by `[hastings]`: on by default, its backend registered with the indexer,
   * its routes mounted before `subsystems`' ones.
   */
  readonly geo?: GeoSubsystemOptions;
}

export interface HttpOptions {
  readonly port?: number;
  readonly host?: string;
  /**
   * Who is a server admin, for every route but `/`, `/_up` and `/_session`.
   * Default: the `[admins]` section (CouchDB's formats), with `/_session`
   * cookies. With no admins at all the API is open, and only loopback may be bound.
   */
  readonly authenticator?: Authenticator;
}

export interface UpholsterStatus {
  readonly running: boolean;
  readonly events: EventSourceStatus;
  readonly subsystems: Readonly<Record<string, unknown>>;
}

export interface Upholster {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Everything, for `/_upholster/status`: event source mode, each subsystem's status. */
  status(): UpholsterStatus;
  /** Counters of every subsystem, by name. */
  metrics(): { readonly smoosh: SmooshMetrics } & Readonly<Record<string, unknown>>;
  /** CouchDB 3.4's `/_smoosh/status` shape. */
  smooshStatus(): SmooshStatus;
  suspend(): void;
  resume(): void;
  enqueue(db: string, ddoc?: string): void;
  enqueueAll(scope: "dbs" | "views"): void;
  flush(): void;
  /** Where the HTTP API listens, once started with `http`. */
  httpAddress(): HttpAddress | undefined;
  /** The compaction daemon itself, for finer control (jobs, whenIdle, reconfigure). */
  readonly smoosh: CompactionDaemon;
  /** The background indexer: registerBackend, enqueue, prioritize, lag, deploy, status. */
  readonly indexing: IndexingDaemon;
  /** Geo: the service behind `_geo`, the index files (for the compaction daemon), the manager. */
  readonly geo: GeoSubsystem;
}

/** Thrown by createUpholster for INI sections that do not decode; `errors` names each section, key and value. */
export class InvalidConfigError extends Error {
  constructor(readonly errors: readonly ConfigError[]) {
    super(`invalid configuration:\n${errors.map(formatConfigError).join("\n")}`);
    this.name = "InvalidConfigError";
  }
}

export function createUpholster(options: UpholsterOptions): Upholster {
  const config = resolveConfig(options.config);
  const scheduler = options.scheduler ?? realScheduler();
  const logger = options.logger ?? createPinoLogger({ level: config.upholster.logLevel });
  const { store, events } = options;

  const indexing = indexingSubsystem({ store, scheduler, config: config.indexing, logger, state: options.state, ...options.indexing });

  const geo = geoSubsystem({ store, settings: config.geo, logger, onQuery: (db, ddoc) => indexing.daemon.noteQuery(db, ddoc), ...options.geo });
  if (geo.backend !== undefined) indexing.daemon.registerBackend(geo.backend);

  // Geo index files are compacted like view groups (through the view channels).
  const compaction = compactionSubsystem({ store, scheduler, config: config.smoosh, logger, state: options.state, geoFiles: geo.files });
  const smoosh = compaction.daemon;

  // The subsystems: compaction, indexing, geo, then what the caller adds (the db updates feed
  // (global_changes, `/_db_updates`) via `dbUpdatesSubsystem`). Geo's routes come before the
  // added ones: the documents routes would otherwise claim `/_design/x/_geo/...`.
  const subsystems: Subsystem[] = [compaction, indexing, geo, ...(options.subsystems ?? [])];

  let running = false;
  let http: HttpServer | undefined;

  const fanOut = (event: StoreEvent): void => {
    for (const subsystem of subsystems) {
      try {
        subsystem.handleStoreEvent(event);
      } catch (error) {
        logger.error({ subsystem: subsystem.name, event: event.type, err: errorText(error) }, "a subsystem failed on a store event");
      }
    }
  };

  const byName = (pick: (s: Subsystem) => unknown): Record<string, unknown> =>
    Object.fromEntries(subsystems.map((s) => [s.name, pick(s)]));

  const status = (): UpholsterStatus => ({ running, events: events.status(), subsystems: byName((s) => s.status()) });
  const metrics = () => ({ ...byName((s) => s.metrics()), smoosh: smoosh.metrics() });

  for (const warning of config.warnings) {
    logger.warn({ section: warning.section, key: warning.key, suggestion: warning.suggestion }, `config: ${formatConfigWarning(warning)}`);
  }

  /** The server, its one guard, and every route: server-level ones, then each subsystem's. */
  async function serve(httpOptions: HttpOptions): Promise<HttpAddress> {
    const host = httpOptions.host ?? config.upholster.bindAddress;
    const authenticator = httpOptions.authenticator ?? (await createLocalAuthenticator({ config: config.ini, clock: scheduler, logger }));
    if (!authenticator.hasAdmins() && !isLoopbackHost(host)) throw new UnprotectedServerError(host);
    const guard: Guard = createGuard({ authenticator, publicStatus: config.upholster.publicStatus, logger });
    const routes: RouteHandler[] = [
      serverRoutes({ isUp: () => running, status, metrics }),
      nodeRoutes(config.upholster.nodeName),
      ...(isLocalAuthenticator(authenticator) ? [createSessionHandler(authenticator, scheduler)] : []),
      ...subsystems.flatMap((s) => s.routes),
    ];
    http = createHttpServer({ routes, guard, nodeName: config.upholster.nodeName, host, port: httpOptions.port ?? config.upholster.port, logger });
    const address = await http.listen();
    if (!authenticator.hasAdmins()) logger.warn({ url: address.url }, UNPROTECTED_WARNING);
    return address;
  }

  return {
    async start() {
      if (running) return;
      for (const subsystem of subsystems) await subsystem.start();
      await events.start(fanOut);
      if (options.http !== undefined) {
        try {
          const address = await serve(options.http);
          logger.info({ url: address.url }, "HTTP API listening");
        } catch (error) {
          // Do not leave subsystems running behind a port we could not bind.
          http = undefined;
          await events.stop();
          for (const subsystem of [...subsystems].reverse()) await subsystem.stop();
          throw error;
        }
      }
      running = true;
    },
    async stop() {
      if (!running) return;
      running = false;
      await http?.close();
      http = undefined;
      await events.stop();
      for (const subsystem of [...subsystems].reverse()) await subsystem.stop();
    },
    status,
    metrics,
    smooshStatus: () => smoosh.status(),
    suspend: () => smoosh.suspend(),
    resume: () => smoosh.resume(),
    enqueue: (db, ddoc) => smoosh.enqueue(db, ddoc),
    enqueueAll: (scope) => smoosh.enqueueAll(scope),
    flush: () => smoosh.flush(),
    httpAddress: () => http?.address(),
    smoosh,
    indexing: indexing.daemon,
    geo,
  };
}

function resolveConfig(config: IniSections | UpholsterConfig | undefined): UpholsterConfig {
  if (isUpholsterConfig(config)) return config;
  const decoded = decodeConfig(config ?? {});
  if (isLeft(decoded)) throw new InvalidConfigError(decoded.left);
  return decoded.right;
}
