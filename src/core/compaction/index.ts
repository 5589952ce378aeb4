/**
 * Public API of the compaction core (smoosh). The shell uses only this module.
 *
 * CONTRACT (pinned; the implementation behind it may change freely):
 *   initSmoosh(config, nowMs)            -> Step   (channels created paused; asks for its first tick)
 *   step(state, event, nowMs)            -> Step
 *   smooshStatus(state)                  -> SmooshStatus (CouchDB 3.4 shape)
 *   smooshMetrics(state)                 -> SmooshMetrics
 *   decodeSmooshConfig(ini)              -> Either<ConfigError[], SmooshConfig>
 *   defaultSmooshConfig                  : SmooshConfig (CouchDB 3.4 defaults)
 *   objectKey(object)                    -> string (stable, unique per object)
 *   describeObject(object)               -> string for logs ("db", "db _design/x", "cleanup db", "db _geo/<signature>")
 *   activeJobs(state)                    -> readonly { jobId, channel, object, adopted }[]
 */
export * from "./types.js";
export { configuredChannels, decodeSmooshConfig, defaultSmooshConfig, type SmooshConfig, type ChannelConfig } from "./config.js";
export { DEFAULT_DBS_PER_INFO_REQUEST } from "./check-budget.js";
export { initSmoosh, step, smooshStatus, smooshMetrics, activeJobs, type SmooshState, type Step } from "./server.js";
export { objectKey, describeObject, channelKindOf } from "./object.js";
export { type SmooshSnapshot } from "./snapshot.js";
// Additions beyond the pinned contract: the snapshot codec the shell decodes
// persisted state with, and a snapshot on demand (shutdown).
export { SmooshSnapshotC, type SmooshSnapshotJson } from "./snapshot.js";
export { smooshSnapshot } from "./server.js";
export { type PriorityMethod } from "./config.js";
