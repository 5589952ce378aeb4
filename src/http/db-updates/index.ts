export * from "./handler.js";
export * from "./framing.js";
