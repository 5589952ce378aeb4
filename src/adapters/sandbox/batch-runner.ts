/**
 * Runs one batch through a guest so that only the guilty (document, function)
 * pairs fail.
 *
 * QuickJS can only interrupt a whole call, so a call gets a slice of
 * `timeoutMsPerDoc`, and the guest notes when each function started. When a
 * slice ends early the runner asks the guest where it was and resumes there:
 * a function that had its full time is marked `timeout`; one that merely
 * straddled the slice is run again with a full slice. A function that exhausts
 * memory is marked `memory` and the guest rebuilt (whatever it kept alive is
 * gone) before resuming after it. Each round either finishes, completes
 * documents, or marks a function, so a batch always ends.
 */
import type { FunctionFailureKind, SandboxLimits } from "../../ports/sandbox.js";
import type { Guest, GuestCall, GuestStop } from "./guest.js";
import { failedEntries, failurePart } from "./wire.js";

/** The guest of one sandbox, which the runner may throw away and have rebuilt. */
export interface GuestSlot {
  engine(): Guest;
  discard(): void;
  readonly functionCount: number;
  /** Function index -> its compile failure part. */
  readonly compileParts: ReadonlyMap<number, string>;
}

interface Progress {
  readonly d: number;
  readonly f: number;
  readonly ms: number;
  readonly parts: readonly string[];
  readonly logs: readonly string[];
  /** logs[0..logMark) came before function f started on document d. */
  readonly logMark: number;
  readonly done: readonly unknown[];
}

interface Position {
  readonly d: number;
  readonly f: number;
  /** JSON [parts, logs] of document d's functions before f. */
  readonly carry: string;
}

const STOP_KINDS: Record<GuestStop["reason"], FunctionFailureKind> = { interrupted: "timeout", memory: "memory", error: "exception" };

export const runBatch = (slot: GuestSlot, text: string, count: number, limits: SandboxLimits, batchDeadlineMs: number): string[] => {
  const run = new BatchRun(slot, count, limits, batchDeadlineMs);
  return run.through(text);
};

class BatchRun {
  private readonly chunks: string[] = [];
  private readonly overrides = new Map<string, string>();
  private position: Position = { d: 0, f: 0, carry: "" };

  constructor(
    private readonly slot: GuestSlot,
    private readonly count: number,
    private readonly limits: SandboxLimits,
    private readonly batchDeadlineMs: number,
  ) {}

  through(text: string): string[] {
    let loaded = false;
    // The first round loads and runs in one crossing; one stopped while loading loads apart from then on.
    let loadApart = false;
    let rounds = this.count * (this.slot.functionCount + 1) * 2 + 8;
    while (this.position.d < this.count) {
      if (rounds-- <= 0) return this.failRest("exception", "the sandbox stopped making progress on this batch");
      const engine = this.slot.engine();
      let result: GuestCall<string>;
      if (!loaded && !loadApart && this.atStart()) {
        result = engine.loadRun(text, this.sliceDeadlineMs());
        loaded = true;
      } else {
        if (!loaded) {
          const load = engine.load(text, Date.now() + this.limits.timeoutMsPerDoc);
          if (!load.ok) return this.loadFailed(load);
          loaded = true;
        }
        result = engine.run(this.position.d, this.position.f, this.position.carry, this.overridesText(), this.sliceDeadlineMs());
      }
      if (result.ok) {
        this.chunks.push(result.value);
        return this.chunks;
      }
      const progress = readProgress(engine);
      if (progress !== undefined && progress.d < 0) {
        // Stopped while loading (loadRun): out of time, the load gets its own per-doc time next round, as it would apart.
        if (result.reason !== "interrupted") return this.loadFailed(result);
        loaded = false;
        loadApart = true;
        continue;
      }
      if (result.reason !== "interrupted") {
        this.slot.discard();
        loaded = false;
      }
      if (progress === undefined) return this.failRest(STOP_KINDS[result.reason], `the sandbox lost track of this batch (${describeStop(result)})`);
      if (this.resumeAfter(result, progress) === "batch-timeout") return this.chunks;
    }
    return this.chunks;
  }

  /** Nothing run yet: the round may load and run in one crossing. */
  private atStart(): boolean {
    return this.position.d === 0 && this.position.f === 0 && this.position.carry === "" && this.overrides.size === 0;
  }

  private sliceDeadlineMs(): number {
    return Math.min(Date.now() + this.limits.timeoutMsPerDoc, this.batchDeadlineMs);
  }

  private overridesText(): string {
    return this.overrides.size === 0 ? "" : JSON.stringify(Object.fromEntries(this.overrides));
  }

  /** Keeps what the guest finished and decides where the next round starts. */
  private resumeAfter(stop: GuestStop, progress: Progress): "resume" | "batch-timeout" {
    this.chunks.push(JSON.stringify(progress.done));
    const completed = this.position.d + progress.done.length;
    if (progress.d !== completed || progress.f >= this.slot.functionCount) {
      // Stopped between two documents, in the loop itself: nobody to blame.
      this.position = { d: completed, f: 0, carry: "" };
      return "resume";
    }
    if (stop.reason === "interrupted" && Date.now() >= this.batchDeadlineMs) {
      this.failFrom(progress, failurePart("timeout", `the batch exceeded its time limit (${this.limits.timeoutMsPerBatch} ms)`));
      return "batch-timeout";
    }
    const verdict = this.verdict(stop, progress);
    if (verdict !== undefined) this.overrides.set(`${progress.d}:${progress.f}`, verdict);
    // A failed attempt keeps what it logged (it explains the failure); one run again will log it again.
    const logs = verdict === undefined ? progress.logs.slice(0, progress.logMark) : progress.logs;
    this.position = { d: progress.d, f: progress.f, carry: JSON.stringify([progress.parts, logs]) };
    return "resume";
  }

  /** The failure part for the function that was running, or undefined to run it again. */
  private verdict(stop: GuestStop, progress: Progress): string | undefined {
    switch (stop.reason) {
      case "interrupted":
        // Less than its full time: it straddled the end of a slice, so it gets a fresh one.
        return Date.now() - progress.ms >= this.limits.timeoutMsPerDoc
          ? failurePart("timeout", `the function exceeded its time limit (${this.limits.timeoutMsPerDoc} ms per document)`)
          : undefined;
      case "memory":
        return failurePart("memory", `the function exceeded the memory limit (${this.limits.memoryBytes} bytes)`);
      case "error":
        return failurePart("exception", `the sandbox failed while running the function: ${stop.message}`);
    }
  }

  /** The running document gets `part` from the running function on; later documents get it for all. */
  private failFrom(progress: Progress, part: string): void {
    const parts = Array.from({ length: this.slot.functionCount }, (_, f) =>
      f < progress.parts.length ? progress.parts[f] : (this.slot.compileParts.get(f) ?? part),
    );
    this.chunks.push(`[[[${parts.join(",")}],${JSON.stringify(progress.logs)}]]`);
    const rest = this.count - progress.d - 1;
    if (rest > 0) this.chunks.push(failedEntries(rest, this.slot.functionCount, part, this.slot.compileParts));
  }

  private failRest(kind: FunctionFailureKind, message: string): string[] {
    const rest = this.count - this.position.d;
    if (rest > 0) this.chunks.push(failedEntries(rest, this.slot.functionCount, failurePart(kind, message), this.slot.compileParts));
    return this.chunks;
  }

  private loadFailed(stop: GuestStop): string[] {
    this.slot.discard();
    const message =
      stop.reason === "memory" ? `the batch does not fit in the sandbox's memory limit (${this.limits.memoryBytes} bytes)` : `the sandbox could not load the batch (${describeStop(stop)})`;
    return this.failRest(STOP_KINDS[stop.reason], message);
  }
}

const describeStop = (stop: GuestStop): string => (stop.reason === "error" ? stop.message : stop.reason);

const readProgress = (engine: Guest): Progress | undefined => {
  const call: GuestCall<string> = engine.progress();
  if (!call.ok) return undefined;
  try {
    const value: unknown = JSON.parse(call.value);
    return isProgress(value) ? value : undefined;
  } catch {
    return undefined;
  }
};

const isProgress = (value: unknown): value is Progress => {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  return (
    Number.isInteger(p.d) &&
    Number.isInteger(p.f) &&
    typeof p.ms === "number" &&
    Number.isInteger(p.logMark) &&
    Array.isArray(p.parts) &&
    p.parts.every((part) => typeof part === "string") &&
    Array.isArray(p.logs) &&
    Array.isArray(p.done)
  );
};
