/**
 * View query parameters as couch_mrview_http:parse_params decodes them, and
 * the checks against the view (couch_mrview_util:validate_args), with
 * CouchDB's messages. (Recorded answers of a real CouchDB for the same
 * errors: test/fixtures/couchdb-3.4.3-views/*-error-*.json.)
 */
import fc from "fast-check";
import { isLeft, isRight } from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { compareViewKeys, decodeViewQuery, resolveViewQuery, viewQuery, type ViewQuery } from "../../../src/core/views/index.js";

const decode = (qs: string) => decodeViewQuery(new URLSearchParams(qs));
const decoded = (qs: string): ViewQuery => {
  const result = decode(qs);
  if (isLeft(result)) throw new Error(JSON.stringify(result.left));
  return result.right;
};
const problem = (qs: string) => {
  const result = decode(qs);
  return isLeft(result) ? result.left : undefined;
};
const resolveProblem = (qs: string, hasReduce: boolean) => {
  const result = resolveViewQuery(decoded(qs), { hasReduce }, compareViewKeys);
  return isLeft(result) ? result.left.reason : undefined;
};

describe("view query parameters", () => {
  it("defaults: inclusive end, ascending, no skip, update first", () => {
    expect(decoded("")).toEqual(viewQuery());
    expect(viewQuery()).toEqual({ inclusiveEnd: true, descending: false, skip: 0, includeDocs: false, update: "true", updateSeq: false });
  });

  it("keys are JSON; key is startkey = endkey; a single keys entry is key; parameters apply in order", () => {
    expect(decoded('key="a"')).toMatchObject({ startkey: "a", endkey: "a" });
    expect(decoded("key=null")).toMatchObject({ startkey: null, endkey: null });
    expect(decoded('keys=["a"]')).toMatchObject({ startkey: "a", endkey: "a" });
    expect(decoded('keys=["a",1]').keys).toEqual(["a", 1]);
    expect(decoded('key=1&startkey=0')).toMatchObject({ startkey: 0, endkey: 1 });
    expect(decoded('start_key="b"&end_key="c"&start_key_doc_id=x&end_key_doc_id=y')).toMatchObject({ startkey: "b", endkey: "c", startkeyDocId: "x", endkeyDocId: "y" });
  });

  it("booleans in any case, counts as Erlang integers, stale as update", () => {
    expect(decoded("descending=TRUE&include_docs=True&inclusive_end=false&update_seq=true")).toMatchObject({ descending: true, includeDocs: true, inclusiveEnd: false, updateSeq: true });
    expect(decoded("limit=%2B5&skip=007&group_level=2")).toMatchObject({ limit: 5, skip: 7, groupLevel: 2 });
    expect(decoded("stale=ok").update).toBe("false");
    expect(decoded("stale=update_after").update).toBe("lazy");
    expect(decoded("update=lazy").update).toBe("lazy");
    expect(decoded("foo=bar&stable=true&sorted=false&conflicts=false&=x")).toEqual(viewQuery());
  });

  it("refuses bad values with CouchDB's words", () => {
    expect(problem("key=abc")).toEqual({ status: 400, error: "bad_request", reason: "invalid UTF-8 JSON" });
    expect(problem('keys="a"')?.reason).toBe("`keys` must be an array of strings.");
    expect(problem("limit=-1")?.reason).toBe('Invalid value for positive integer: "-1"');
    expect(problem("limit=abc")?.reason).toBe('Invalid value for integer: "abc"');
    expect(problem("skip=1.5")?.reason).toBe('Invalid value for integer: "1.5"');
    expect(problem("descending=yes")?.reason).toBe('Invalid boolean parameter: "yes"');
    expect(problem("update=maybe")?.reason).toBe("Invalid value for `update`.");
    expect(problem("stale=never")?.reason).toBe("Invalid value for `stale`.");
    expect(problem("stable=1")?.reason).toBe("Invalid value for `stable`.");
  });

  it("a POST body is decoded first (its values already JSON), the query string over it", () => {
    const result = decodeViewQuery(new URLSearchParams("limit=2"), { keys: ["a", "b"], limit: 10, descending: true, key: undefined });
    expect(isRight(result) && result.right).toMatchObject({ keys: ["a", "b"], limit: 2, descending: true });
    const single = decodeViewQuery([], { keys: [["x", 1]] });
    expect(isRight(single) && single.right).toMatchObject({ startkey: ["x", 1], endkey: ["x", 1] });
  });

  it("never throws, whatever the parameters", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("key", "keys", "startkey", "limit", "skip", "group", "group_level", "descending", "update", "stale", "reduce", "x"), fc.string())), (params) => {
        const result = decodeViewQuery(params);
        if (isLeft(result)) expect(result.left.status).toBe(400);
      }),
    );
  });
});

describe("view query checks against the view", () => {
  it("reduce, grouping and include_docs depend on the view having a reduce", () => {
    expect(resolveProblem("reduce=true", false)).toBe("Reduce is invalid for map-only views.");
    expect(resolveProblem("group=true", false)).toBe("Invalid use of grouping on a map view.");
    expect(resolveProblem("group_level=1", false)).toBe("Invalid use of grouping on a map view.");
    expect(resolveProblem("group_level=0", false)).toBeUndefined();
    expect(resolveProblem("include_docs=true", true)).toBe("`include_docs` is invalid for reduce");
    expect(resolveProblem("include_docs=true&reduce=false", true)).toBeUndefined();
    expect(resolveProblem('keys=["a","b"]', true)).toBe("Multi-key fetches for reduce views must use `group=true`");
    expect(resolveProblem('keys=["a","b"]&group=true', true)).toBeUndefined();
    expect(resolveProblem("group=false&group_level=1", true)).toBe("Can't specify group=false and group_level>0 at the same time");
    expect(resolveProblem('keys=["a","b"]&key="a"', false)).toBe("`keys` is incompatible with `key`, `start_key` and `end_key`");
  });

  it("a range that runs backwards is refused, in either direction", () => {
    expect(resolveProblem('startkey="c"&endkey="b"', false)).toBe("No rows can match your key range, reverse your start_key and end_key or set descending=true");
    expect(resolveProblem('startkey="b"&endkey="c"&descending=true', false)).toBe("No rows can match your key range, reverse your start_key and end_key or set descending=false");
    expect(resolveProblem('startkey="c"&endkey="b"&descending=true', false)).toBeUndefined();
    // Equal keys: the doc ids decide; identical keys are never checked.
    expect(resolveProblem('startkey="c"&endkey="c\u200B"', false)).toBeUndefined();
    expect(resolveProblem('startkey="a"&endkey="a"&startkey_docid=z&endkey_docid=a', false)).toBeUndefined();
  });

  it("keys come in reverse when descending (CouchDB reverses them)", () => {
    const result = resolveViewQuery(decoded('keys=["a","b","c"]&descending=true'), { hasReduce: false }, compareViewKeys);
    expect(isRight(result) && result.right.keys).toEqual(["c", "b", "a"]);
  });
});
