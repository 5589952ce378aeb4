/**
 * Carries out the core's job effects on the store: start (or adopt) a
 * compaction, watch it to its end, and suspend, resume or cancel it where the
 * store can. Every outcome comes back to the core as an event. Geo index
 * files are compacted through `GeoIndexFiles`, never the store.
 */
import type { CompactionObject, SmooshEvent } from "../../core/compaction/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { GeoIndexFiles } from "../../ports/geo.js";
import type { Logger } from "../../ports/shell.js";
import type { CompactionStore, JobHandle } from "../../ports/store.js";
import type { InFlight } from "../in-flight.js";

export type JobControl = "suspend" | "resume" | "cancel";

export interface JobRunner {
  start(jobId: number, object: CompactionObject, adopt: boolean): void;
  control(jobId: number, action: JobControl): void;
  /** Jobs with a live handle (started or adopted, not yet ended). */
  runningCount(): number;
}

/**
 * The handle of a new job. The core never adopts a geo file (only upholster
 * compacts them), so `adopt` concerns the store's objects alone.
 */
const launch = (store: CompactionStore, geoFiles: GeoIndexFiles | undefined, object: CompactionObject, adopt: boolean): Promise<JobHandle> => {
  if (object.kind !== "geo") return adopt ? store.attachJob(object) : store.startJob(object);
  if (geoFiles === undefined) return Promise.reject(new Error("no geo index files to compact here"));
  return geoFiles.compact(object.db, object.signature);
};

export function createJobRunner(
  store: CompactionStore,
  inFlight: InFlight,
  logger: Logger,
  answer: (event: SmooshEvent) => void,
  geoFiles?: GeoIndexFiles,
): JobRunner {
  const handles = new Map<number, JobHandle>();
  const reportedIncapable = new Set<JobControl>();

  const watch = (jobId: number, handle: JobHandle): void => {
    // Not tracked as in flight: a compaction may run for hours and stop() must not wait for it.
    handle.done.then(
      (outcome) => {
        handles.delete(jobId);
        answer(
          outcome.ok
            ? { type: "job-finished", jobId, ...(outcome.reclaimedBytes !== undefined ? { reclaimedBytes: outcome.reclaimedBytes } : {}) }
            : { type: "job-failed", jobId, error: outcome.reason },
        );
      },
      (error: unknown) => {
        // The port says `done` never rejects; an adapter that does anyway is treated as a failure.
        handles.delete(jobId);
        answer({ type: "job-failed", jobId, error: errorText(error) });
      },
    );
  };

  const start = async (jobId: number, object: CompactionObject, adopt: boolean): Promise<void> => {
    let handle: JobHandle;
    try {
      handle = await launch(store, geoFiles, object, adopt);
    } catch (error) {
      answer({ type: "job-start-failed", jobId, error: errorText(error) });
      return;
    }
    handles.set(jobId, handle);
    answer({ type: "job-started", jobId });
    watch(jobId, handle);
  };

  const control = (jobId: number, action: JobControl): void => {
    const handle = handles.get(jobId);
    if (handle === undefined) return; // ended meanwhile
    const method = handle[action];
    if (method === undefined) {
      // CouchDB's HTTP API cannot pause or abort a compaction: say so once, not on every window close.
      if (!reportedIncapable.has(action)) {
        reportedIncapable.add(action);
        logger.warn({ action }, `the store cannot ${action} compaction jobs; running jobs continue`);
      }
      return;
    }
    inFlight.track(
      method.call(handle).catch((error: unknown) => {
        logger.warn({ action, jobId, err: errorText(error) }, `could not ${action} a compaction job`);
      }),
    );
  };

  return {
    start: (jobId, object, adopt) => inFlight.track(start(jobId, object, adopt)),
    control,
    runningCount: () => handles.size,
  };
}
