/**
 * Sandbox limits: CouchDB's defaults, and the bounds that keep a bad value
 * (NaN, 0, a string from a config file) from disabling a limit.
 */
import type { SandboxLimits } from "../../ports/sandbox.js";

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  // CouchDB's os_process_timeout: how long couchjs may take on one document.
  timeoutMsPerDoc: 5000,
  timeoutMsPerBatch: 120_000,
  // couchjs's default JS heap (-S 64 MiB).
  memoryBytes: 64 * 1024 * 1024,
};

const MIN_MEMORY_BYTES = 4 * 1024 * 1024; // below this the prelude and a batch do not fit
const MAX_MEMORY_BYTES = 1024 * 1024 * 1024; // wasm32 heap, with room for the engine itself
const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;

const clamp = (value: unknown, fallback: number, min: number, max: number): number =>
  typeof value === "number" && Number.isFinite(value) ? Math.min(max, Math.max(min, Math.floor(value))) : fallback;

export const resolveLimits = (limits: Partial<SandboxLimits> = {}): SandboxLimits => {
  const timeoutMsPerDoc = clamp(limits.timeoutMsPerDoc, DEFAULT_SANDBOX_LIMITS.timeoutMsPerDoc, 1, MAX_TIMEOUT_MS);
  return {
    timeoutMsPerDoc,
    timeoutMsPerBatch: clamp(limits.timeoutMsPerBatch, Math.max(DEFAULT_SANDBOX_LIMITS.timeoutMsPerBatch, timeoutMsPerDoc), 1, MAX_TIMEOUT_MS),
    memoryBytes: clamp(limits.memoryBytes, DEFAULT_SANDBOX_LIMITS.memoryBytes, MIN_MEMORY_BYTES, MAX_MEMORY_BYTES),
  };
};
