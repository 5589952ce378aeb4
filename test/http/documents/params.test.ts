/**
 * The `_changes` parameter decoder, the `_changes` page rules and the
 * checks on documents to write, on their own: CouchDB's readings and
 * errors, ours where we differ on purpose (the reason names the parameter
 * and the value). The view parameters are the view core's (src/core/views).
 */
import { isLeft, isRight, type Either } from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { selectChanges } from "../../../src/http/documents/changes-page.js";
import { decodeChangesParams, type ChangesParams } from "../../../src/http/documents/changes-params.js";
import { decodeDocument } from "../../../src/http/documents/doc-body.js";
import { designDocProblem } from "../../../src/http/documents/design-doc.js";

const ok = <E, A>(decoded: Either<E, A>): A => {
  if (isLeft(decoded)) throw new Error(`expected a decoded value, got ${JSON.stringify(decoded.left)}`);
  return decoded.right;
};
const problem = <E, A>(decoded: Either<E, A>): E => {
  if (isRight(decoded)) throw new Error(`expected a problem, got ${JSON.stringify(decoded.right)}`);
  return decoded.left;
};
const query = (text: string): URLSearchParams => new URLSearchParams(text);

describe("_changes parameters", () => {
  it("has CouchDB's defaults", () => {
    expect(ok(decodeChangesParams(query("")))).toEqual({
      feed: "normal",
      since: "0",
      limit: undefined,
      descending: false,
      includeDocs: false,
      filter: { kind: "all" },
      timeoutMs: 60_000,
      heartbeatMs: undefined,
    });
  });

  it("caps the timeout at 60 s, makes heartbeat=true 60 s and raises short heartbeats to 100 ms", () => {
    expect(ok(decodeChangesParams(query("timeout=600000"))).timeoutMs).toBe(60_000);
    expect(ok(decodeChangesParams(query("heartbeat=true"))).heartbeatMs).toBe(60_000);
    expect(ok(decodeChangesParams(query("heartbeat=1"))).heartbeatMs).toBe(100);
  });

  it("reads _doc_ids from the body of a POST and from the query string of a GET", () => {
    expect(ok(decodeChangesParams(query("filter=_doc_ids"), { doc_ids: ["a"] })).filter).toEqual({ kind: "doc_ids", ids: new Set(["a"]) });
    expect(ok(decodeChangesParams(query('filter=_doc_ids&doc_ids=["b"]'))).filter).toEqual({ kind: "doc_ids", ids: new Set(["b"]) });
    expect(problem(decodeChangesParams(query("filter=_doc_ids"), { doc_ids: [1] })).reason).toBe("`doc_ids` filter parameter is not a list of doc ids.");
  });

  it("answers CouchDB's errors, and 400 where CouchDB crashes", () => {
    const reason = (text: string): string => problem(decodeChangesParams(query(text))).reason;
    expect(reason("feed=xx")).toBe("Supported `feed` types: normal, continuous, live, longpoll, eventsource");
    expect(reason("since=abc")).toBe("Malformed sequence supplied in 'since' parameter.");
    expect(reason("filter=foo")).toBe("`filter` must be of the form `designname/filtername`");
    expect(reason("filter=_foo")).toBe("unknown builtin filter name");
    expect(reason("heartbeat=0")).toBe("The heartbeat value should be a positive integer (in milliseconds).");
    expect(reason("heartbeat=x")).toBe("Invalid heartbeat value. Expecting a positive integer value (in milliseconds).");
    expect(reason("limit=-1")).toBe('limit must be a non-negative integer, got "-1"');
    expect(reason("timeout=abc")).toBe('timeout must be a non-negative integer, got "abc"');
    expect(reason("descending=yes")).toBe('descending must be true or false, got "yes"');
    expect(reason("style=odd")).toBe('style must be main_only or all_docs, got "odd"');
  });

  it("refuses what the embedded store does not serve, saying so", () => {
    const reason = (text: string): string => problem(decodeChangesParams(query(text))).reason;
    expect(reason("feed=continuous")).toBe("feed=continuous (use normal or longpoll) is not supported by upholster's embedded store");
    expect(reason("filter=ddoc/name")).toMatch(/^filter=ddoc\/name \(JavaScript filter functions\) is not supported/);
    expect(reason("filter=_selector")).toMatch(/^filter=_selector is not supported/);
  });
});

describe("the _changes page", () => {
  const rows = ["a", "_design/d", "b", "c"].map((id, i) => ({ id, seq: String(i + 1), rev: "1-x" }));
  const slice = { rows, since: "0", lastSeq: "4" };
  const page = (params: Partial<Pick<ChangesParams, "filter" | "limit" | "descending">>) =>
    selectChanges(slice, { filter: { kind: "all" }, descending: false, ...params });

  it("is every change up to the db's seq without a limit", () => {
    expect(page({})).toEqual({ rows, lastSeq: "4", pending: 0 });
  });

  it("ends at the last row with a limit, and counts what is left", () => {
    expect(page({ limit: 2 })).toEqual({ rows: rows.slice(0, 2), lastSeq: "2", pending: 2 });
    expect(page({ limit: 0 })).toEqual({ rows: [], lastSeq: "0", pending: 4 });
  });

  it("filters before the limit; pending counts every change left", () => {
    expect(page({ filter: { kind: "design" } })).toEqual({ rows: [rows[1]], lastSeq: "4", pending: 0 });
    expect(page({ filter: { kind: "doc_ids", ids: new Set(["b", "c"]) }, limit: 1 })).toEqual({ rows: [rows[2]], lastSeq: "3", pending: 1 });
  });

  it("goes newest first when descending, last_seq the oldest row's", () => {
    expect(page({ descending: true, limit: 2 })).toEqual({ rows: [rows[3], rows[2]], lastSeq: "3", pending: 2 });
  });
});

describe("documents to write", () => {
  it("keeps the body, takes the specials apart, drops what has no meaning here", () => {
    expect(ok(decodeDocument({ _id: "a", _rev: "1-abc", _deleted: false, _revisions: {}, n: 1, _access: ["x"] }))).toEqual({
      id: "a",
      rev: "1-abc",
      deleted: false,
      body: { n: 1, _access: ["x"] },
    });
  });

  it("answers CouchDB's errors", () => {
    expect(problem(decodeDocument([]))).toEqual({ status: 400, error: "bad_request", reason: "Document must be a JSON object" });
    expect(problem(decodeDocument({ _id: 1 }))).toEqual({ status: 400, error: "illegal_docid", reason: "Document id must be a string" });
    expect(problem(decodeDocument({ _id: "_x" })).error).toBe("illegal_docid");
    expect(problem(decodeDocument({ _id: "" })).reason).toBe("Document id must not be empty");
    expect(problem(decodeDocument({ _rev: "x" })).reason).toBe("Invalid rev format");
    expect(problem(decodeDocument({ _deleted: "yes" }))).toEqual({ status: 400, error: "doc_validation", reason: "Bad special document member: _deleted" });
    expect(problem(decodeDocument({ _foo: 1 })).reason).toBe("Bad special document member: _foo");
    expect(problem(decodeDocument({ _attachments: {} })).reason).toBe("_attachments is not supported by upholster's embedded store");
  });

  it("checks design docs' views as CouchDB does", () => {
    expect(designDocProblem({ views: { v: { map: "function (doc) {}" } } })).toBeUndefined();
    expect(designDocProblem({ views: [] })?.reason).toBe("`views` field must have object type");
    expect(designDocProblem({ views: { v: 1 } })?.reason).toBe("`views.v` field must have object type");
    expect(designDocProblem({ views: { v: {} } })?.reason).toBe("View `v` must contain map function");
    expect(designDocProblem({ views: { v: { map: 1 } } })?.reason).toBe("`views.v.map` field must have string type");
    expect(designDocProblem({ views: { v: { map: "f", reduce: 1 } } })?.reason).toBe("`views.v.reduce` field must have string type");
    expect(designDocProblem({ language: "query", views: { v: { map: { fields: {} } } } })).toBeUndefined();
  });
});
