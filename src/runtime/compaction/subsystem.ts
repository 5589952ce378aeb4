/**
 * Compaction (smoosh) as one of upholster's subsystems: the daemon, its
 * `/_smoosh/*` routes, its status and metrics.
 */
import type { SmooshConfig } from "../../core/compaction/index.js";
import { smooshRoutes } from "../../http/compaction/routes.js";
import type { GeoIndexFiles } from "../../ports/geo.js";
import type { Logger, Scheduler, StatePort } from "../../ports/shell.js";
import type { CompactionStore } from "../../ports/store.js";
import type { Subsystem } from "../subsystem.js";
import { createCompactionDaemon, type CompactionDaemon } from "./daemon.js";

export interface CompactionSubsystemDeps {
  readonly store: CompactionStore;
  readonly scheduler: Scheduler;
  readonly config: SmooshConfig;
  readonly logger: Logger;
  readonly state?: StatePort | undefined;
  /** Geo index files to compact through the view channels; absent: dbs, views and cleanups only. */
  readonly geoFiles?: GeoIndexFiles | undefined;
}

export interface CompactionSubsystem extends Subsystem {
  readonly daemon: CompactionDaemon;
}

export function compactionSubsystem(deps: CompactionSubsystemDeps): CompactionSubsystem {
  const daemon = createCompactionDaemon(deps);
  return {
    name: "smoosh",
    daemon,
    start: () => daemon.start(),
    stop: () => daemon.stop(),
    handleStoreEvent: (event) => daemon.handleStoreEvent(event),
    routes: [smooshRoutes(daemon, deps.store)],
    status: () => daemon.status(),
    metrics: () => daemon.metrics(),
  };
}
