/**
 * upholster as a library: the composition root (`createUpholster`), the
 * pieces it is made of, and the types of the ports an embedder implements.
 */

// --- composition root ---------------------------------------------------------
export { createUpholster, InvalidConfigError, type Upholster, type UpholsterOptions, type UpholsterStatus } from "./runtime/upholster.js";
export type { Subsystem } from "./runtime/subsystem.js";

// --- smoosh (auto-compaction) ---------------------------------------------------
export { createCompactionDaemon, type CompactionDaemon, type CompactionDaemonOptions, type JobSummary } from "./runtime/compaction/daemon.js";
export { compactionSubsystem, type CompactionSubsystem } from "./runtime/compaction/subsystem.js";
export {
  decodeSmooshConfig,
  defaultSmooshConfig,
  objectKey,
  describeObject,
  type SmooshConfig,
  type ChannelConfig,
  type SmooshStatus,
  type ChannelStatus,
  type SmooshMetrics,
  type CompactionObject,
  type SmooshSnapshot,
} from "./core/compaction/index.js";

// --- db updates (global_changes, /_db_updates) ---------------------------------
export { createDbUpdatesService, dbUpdatesSubsystem, type DbUpdatesSubsystem } from "./runtime/db-updates/index.js";
export { createLocalAuthenticator, createCouchDbAuthenticator, type Authenticator } from "./http/auth/index.js";
export { createGuard, UnprotectedServerError, ADMIN_ONLY, STATUS, PUBLIC, dbReader, type Guard, type DbSecurity, type Access } from "./http/auth/index.js";

// --- background indexing (ken, the CouchDB 4 index builder) ---------------------
export { createIndexingDaemon, type IndexingDaemon, type IndexingDaemonOptions, type DeployAnswer } from "./runtime/indexing/daemon.js";
export { indexingSubsystem, type IndexingSubsystem, type IndexingSubsystemOptions } from "./runtime/indexing/subsystem.js";
export { tapViewQueries, type QueryTap } from "./runtime/indexing/query-tap.js";
export type { IndexLag } from "./runtime/indexing/lag.js";
export {
  decodeIndexingConfig,
  defaultIndexingConfig,
  initIndexing,
  step as indexingStep,
  indexingStatus,
  shouldStartJob,
  viewIndexesOf,
  namedIndexesOf,
  type IndexingConfig,
  type IndexingStatus,
  type IndexStatus,
  type IndexingMetrics,
  type IndexingEvent,
  type IndexingEffect,
  type IndexSpec,
  type IndexProgress,
  type ListedDesignDoc,
} from "./core/indexing/index.js";
export { createMemoryViewsBackend, type MemoryViewsBackendOptions } from "./adapters/memory/indexing/views-backend.js";
export {
  createCouchIndexBackends,
  couchViewsBackend,
  couchFullTextBackend,
  DREYFUS,
  NOUVEAU,
  type CouchIndexBackends,
  type CouchIndexBackendsOptions,
} from "./adapters/couchdb-http/indexing/index.js";
export type { IndexBackend, BuildOptions, BuildResult } from "./ports/index-backend.js";

// --- configuration --------------------------------------------------------------
export { loadConfig, decodeConfig, formatConfigProblem, type UpholsterConfig, type ConfigProblem, type LoadConfigOptions } from "./config/load.js";
export { parseIniText, mergeIni } from "./config/ini-file.js";
export { decodeUpholsterSettings, defaultUpholsterSettings, type UpholsterSettings } from "./config/upholster-section.js";
export { formatConfigError, type ConfigError, type IniSections } from "./core/shared/ini.js";

// --- stores, schedulers, state, logs ------------------------------------------
export { createMemoryStore, MemoryStore, type MemoryStoreOptions } from "./adapters/memory/index.js";
export { createCouchStore, redactUrl, type CouchStoreOptions, type CouchStoreHandle } from "./adapters/couchdb-http/index.js";
export { createWorkload, type Workload, type WorkloadOptions } from "./adapters/memory/workload.js";
export { createFileStatePort, createMemoryStatePort, type MemoryStatePort } from "./adapters/state/index.js";
export { realScheduler, VirtualScheduler } from "./runtime/scheduler.js";
export { createPinoLogger, createRecordingLogger, silentLogger, type RecordingLogger, type LogLine } from "./adapters/logging/index.js";

// --- geo (hastings: st_indexes, _geo) ----------------------------------------------
export { geoSubsystem, type GeoSubsystem, type GeoSubsystemOptions } from "./runtime/geo/subsystem.js";
export { GeoIndex, type GeoIndexOptions, type GeoIndexSizes } from "./adapters/geo/index.js";
export { parseGeoRequest, runGeoSearch, formatGeoResponse, validateGeoJson, type GeoQuery, type PreparedGeoQuery, type GeoPage } from "./core/geo/index.js";
export { geoRoutes } from "./http/geo/index.js";
export { GeoError, type GeoService, type GeoIndexRef, type GeoSearchAnswer, type GeoIndexFiles, type GeoIndexFile } from "./ports/geo.js";

// --- HTTP -----------------------------------------------------------------------
export { createHttpServer, type HttpServer, type HttpAddress, type HttpServerOptions } from "./http/server.js";
export { smooshRoutes, type SmooshControl } from "./http/compaction/routes.js";
export type { RouteHandler } from "./http/types.js";

// --- ports ----------------------------------------------------------------------
export type { Store, CompactionStore, DocumentStore, DbInfo, ViewIndexInfo, DesignDoc, JobHandle, JobOutcome } from "./ports/store.js";
export type { EventSource, EventSourceStatus, StoreEvent, StoreEventListener } from "./ports/events.js";
export type { Scheduler, Clock, Timers, StatePort, Logger } from "./ports/shell.js";

export { UPHOLSTER_VERSION } from "./version.js";
