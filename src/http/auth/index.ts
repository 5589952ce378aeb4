export * from "./types.js";
export * from "./credentials.js";
export * from "./password-hash.js";
export * from "./session-cookie.js";
export * from "./local-authenticator.js";
export * from "./couchdb-authenticator.js";
export * from "./session-handler.js";
