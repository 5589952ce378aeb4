/** The db updates core (global_changes): pure functions over an explicit clock. */
export * from "./keys.js";
export * from "./transform.js";
export * from "./batch.js";
export * from "./listener.js";
export * from "./writer.js";
export * from "./config.js";
export * from "./params.js";
