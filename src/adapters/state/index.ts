/** StatePort adapters. */
export { createFileStatePort, stateFileName, type FileStatePortOptions } from "./file-state.js";
export { createMemoryStatePort, type MemoryStatePort } from "./memory-state.js";
