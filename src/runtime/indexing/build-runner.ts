/**
 * `build-index`: one build through its backend, answered by
 * `build-finished` or `build-failed`. A backend that throws is a failure
 * (logged by the core, retried); one that hangs is one too: a build that
 * reports no progress for `build_timeout_msec` is aborted and failed as
 * transient. An aborted build (timeout, its db deleted, shutdown) keeps its
 * channel until the backend lets go of it, so no more builds run than the
 * channels allow; a backend that ignores the abort is waited for at most
 * `ABORT_GRACE_MS` (it cannot hold up `stop()` or a channel for ever).
 */
import type { IndexingEffect, IndexingEvent } from "../../core/indexing/index.js";
import { errorText } from "../../core/shared/error-text.js";
import type { Scheduler } from "../../ports/shell.js";
import type { InFlight } from "../in-flight.js";
import { BuildTimeoutError, isTransient } from "./errors.js";
import type { BackendRegistry } from "./registry.js";

type BuildEffect = Extract<IndexingEffect, { type: "build-index" }>;

/** How long an aborted build may take to let go before it is no longer waited for. */
export const ABORT_GRACE_MS = 5_000;

export interface BuildRunnerDeps {
  readonly registry: BackendRegistry;
  readonly scheduler: Scheduler;
  readonly inFlight: InFlight;
  readonly dispatch: (event: IndexingEvent) => void;
  readonly timeoutMs: () => number;
}

export interface BuildRunner {
  start(effect: BuildEffect): void;
  cancel(jobId: number): void;
  /** Abort every build (shutdown): their answers are dropped by a closed core. */
  abortAll(): void;
  runningCount(): number;
}

export function createBuildRunner(deps: BuildRunnerDeps): BuildRunner {
  const controllers = new Map<number, AbortController>();

  const run = (effect: BuildEffect, controller: AbortController): Promise<IndexingEvent> => {
    const backend = deps.registry.byType(effect.index.type);
    if (backend === undefined) {
      return Promise.resolve({ type: "build-failed", jobId: effect.jobId, error: `no backend of type ${effect.index.type}`, transient: false });
    }
    const failed = (error: string, transient: boolean): IndexingEvent => ({ type: "build-failed", jobId: effect.jobId, error, transient });
    return new Promise<IndexingEvent>((resolve) => {
      let cancelTimer = (): void => undefined;
      let settled = false;
      /** Why it was aborted (timeout, cancel, shutdown): the answer once the backend lets go. */
      let abortedWith: IndexingEvent | undefined;
      const settle = (event: IndexingEvent): void => {
        if (settled) return;
        settled = true;
        cancelTimer();
        resolve(event);
      };
      // Aborted: the channel stays taken until the backend lets go of the build (it should, at
      // once), or `ABORT_GRACE_MS` passes (it ignores the abort: it is let go, and no longer counted).
      controller.signal.addEventListener(
        "abort",
        () => {
          abortedWith ??= failed("aborted", true);
          cancelTimer();
          cancelTimer = deps.scheduler.setTimeout(() => settle(abortedWith!), ABORT_GRACE_MS);
        },
        { once: true },
      );
      const arm = (): void => {
        if (settled || controller.signal.aborted) return;
        cancelTimer();
        const timeoutMs = deps.timeoutMs();
        cancelTimer = deps.scheduler.setTimeout(() => {
          abortedWith = failed(new BuildTimeoutError(timeoutMs).message, true);
          controller.abort();
        }, timeoutMs);
      };
      arm();
      let work: Promise<{ indexSeq: number; dbSeq?: number | undefined }>;
      try {
        work = backend.build(effect.db, effect.index, { targetSeq: effect.targetSeq, signal: controller.signal, onProgress: arm });
      } catch (error) {
        work = Promise.reject(error);
      }
      work.then(
        (result) => settle({ type: "build-finished", jobId: effect.jobId, indexSeq: result.indexSeq, dbSeq: result.dbSeq }),
        (error: unknown) => settle(abortedWith ?? failed(errorText(error), isTransient(error))),
      );
    });
  };

  return {
    start(effect) {
      const controller = new AbortController();
      controllers.set(effect.jobId, controller);
      deps.inFlight.track(
        run(effect, controller).then((event) => {
          controllers.delete(effect.jobId);
          deps.dispatch(event);
        }),
      );
    },
    cancel(jobId) {
      controllers.get(jobId)?.abort();
    },
    abortAll() {
      for (const controller of controllers.values()) controller.abort();
    },
    runningCount: () => controllers.size,
  };
}
