export * from "./service.js";
export * from "./subsystem.js";
export { RevCache } from "./rev-cache.js";
