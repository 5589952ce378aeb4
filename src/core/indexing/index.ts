/**
 * Public API of the indexing core (ken + the CouchDB 4 index builder). The
 * shell uses only this module.
 *
 *   initIndexing(config, nowMs, seed)      -> Step  (the seed drives the sweep jitter and design doc order)
 *   step(state, event, nowMs)              -> Step
 *   indexingStatus(state, nowMs, max?)     -> IndexingStatus
 *   indexingMetrics(state)                 -> IndexingMetrics
 *   decodeIndexingConfig(ini)              -> Either<ConfigError[], IndexingConfig>
 *   shouldStartJob(question, config)       -> StartAnswer (ken's rule, pure)
 *   viewIndexesOf / namedIndexesOf         -> which indexes design docs define (shared by backends)
 */
export * from "./types.js";
export { decodeIndexingConfig, defaultIndexingConfig, totalChannels, DEFAULT_LANGUAGES, type IndexingConfig } from "./config.js";
export { initIndexing, step, type IndexingState, type Step } from "./reducer.js";
export { indexingStatus, indexingMetrics, knownIndexesOf, type IndexingStatus, type IndexStatus, type DeployStatus } from "./status.js";
export { shouldStartJob, type JobEntry, type StartAnswer, type StartQuestion, type Refusal } from "./should-start.js";
export { viewIndexesOf, namedIndexesOf, type IndexDiscovery } from "./index-specs.js";
export { autoUpdates, refusalOf, selectIndexes } from "./design-docs.js";
export { DeployRecordC, deployRefusal, deployIdOf, stageIdOf, isActive, sameBody, STAGE_SUFFIX, type DeployRecord, type DeployPhase } from "./deploy.js";
export { priorityClassOf, type PriorityClass } from "./priority.js";
export { isFresh } from "./jobs.js";
export { stableJson, digestOf } from "./identity.js";
