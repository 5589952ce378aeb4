/**
 * What the document routes need from a store: the document API port
 * (src/ports/document-api.ts), which the memory store implements.
 */
export * from "../../ports/document-api.js";
