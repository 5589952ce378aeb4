/**
 * The host side of one compiled design doc. A `run` is cut into batches sent
 * back to back, so the sandbox thread works on one while this thread encodes
 * the next and decodes the last. Whatever goes wrong with a batch comes back
 * as failures of its documents; `run` rejects only after `dispose`.
 */
import type { DocOutcome, FunctionFailureKind, IndexFunctionKind, IndexSandbox, SandboxLimits, SerializedDoc } from "../../ports/sandbox.js";
import type { SandboxTransport } from "./transport.js";
import { BatchBuilder, decodeOutcomes, failedOutcomes, type EncodedBatch } from "./wire.js";
import { WorkerFailure } from "./worker-client.js";

/** Per batch: enough to make a crossing negligible, small enough to overlap encoding with running. */
const MAX_DOCS_PER_BATCH = 500;
/** A batch is held in the guest's heap (twice: text and lines), beside what the functions allocate. */
const batchCharsFor = (limits: SandboxLimits): number => Math.max(64 * 1024, Math.floor(limits.memoryBytes / 16));

export class HostedIndexSandbox implements IndexSandbox {
  private disposed = false;

  constructor(
    private readonly transport: SandboxTransport,
    private readonly handle: number,
    private readonly kinds: readonly IndexFunctionKind[],
    private readonly limits: SandboxLimits,
  ) {}

  async run(docs: readonly (Record<string, unknown> | SerializedDoc)[]): Promise<readonly DocOutcome[]> {
    if (this.disposed) throw new Error("the sandbox was disposed");
    const batchDeadlineMs = Date.now() + this.limits.timeoutMsPerBatch;
    const builder = new BatchBuilder(MAX_DOCS_PER_BATCH, batchCharsFor(this.limits));
    let pending: Promise<DocOutcome[]>[] | undefined;
    for (const doc of docs) {
      builder.add(doc);
      if (builder.full) (pending ??= []).push(this.send(builder.take(), batchDeadlineMs));
    }
    // Most runs are one batch (a document or two): awaited alone, with no list of batches to gather.
    if (pending === undefined) return builder.empty ? [] : await this.send(builder.take(), batchDeadlineMs);
    if (!builder.empty) pending.push(this.send(builder.take(), batchDeadlineMs));
    return (await Promise.all(pending)).flat();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.transport.drop(this.handle);
  }

  /** Never rejects: a failed batch is a failure of each of its documents. */
  private async send(batch: EncodedBatch, batchDeadlineMs: number): Promise<DocOutcome[]> {
    try {
      const chunks = await this.transport.run(this.handle, batch.text, batch.count, this.limits, batchDeadlineMs);
      return decodeOutcomes(chunks, this.kinds, batch);
    } catch (error) {
      return failedOutcomes(batch.ids, this.kinds, failureKindOf(error), failureMessageOf(error));
    }
  }
}

const failureKindOf = (error: unknown): FunctionFailureKind => {
  if (!(error instanceof WorkerFailure)) return "exception";
  if (error.outOfMemory) return "memory";
  return error.kind === "unresponsive" ? "timeout" : "exception";
};

const failureMessageOf = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error);
  return `the sandbox failed on this batch: ${message}`;
};
