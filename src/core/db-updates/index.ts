/** The db updates core (global_changes): pure functions over an explicit clock. */
export * from "./keys.js";
export * from "./transform.js";
export * from "./batch.js";
export * from "./listener.js";
export * from "./writer.js";
export * from "./config.js";
export * from "./params.js";
export * from "./db-order.js";
export * from "./seq-mark.js";
export * from "./reconcile.js";
export * from "./reconcile-pass.js";
export * from "./known-shards.js";
