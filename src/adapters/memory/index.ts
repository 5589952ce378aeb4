/** The embedded in-memory store: public API. */
export {
  createMemoryStore,
  MemoryStore,
  NotFoundError,
  StoreUnavailableError,
  type CreateDbResult,
  type MemoryStoreOptions,
  type StoreTotals,
} from "./store.js";
export { defaultStorageModel, type StorageModel } from "./storage-model.js";
export type { JobStatus } from "./jobs.js";
export { dbNameProblem } from "./names.js";
export { createWorkload, type Workload, type WorkloadOptions, type WorkloadStats } from "./workload.js";
export { createRandom, type Random } from "./random.js";
