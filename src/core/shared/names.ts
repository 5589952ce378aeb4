/** CouchDB naming rules shared by every subsystem. */

/** `"foo"` and `"_design/foo"` both name the design doc `_design/foo`. */
export const designDocId = (ddoc: string): string => (ddoc.startsWith("_design/") ? ddoc : `_design/${ddoc}`);
