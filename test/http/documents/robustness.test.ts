/**
 * Bad input never gets a 5xx: random query strings and bodies on every
 * document route answer 2xx, 304 or a 4xx with CouchDB's `{error, reason}`
 * body, and the server keeps serving. A store switched off answers 503
 * `service_unavailable`, and a longpoll waiting through the outage still
 * ends with the first write after it.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_AUTH, request, startDocumentsDaemon, type DocumentsDaemon } from "./harness.js";

let daemon: DocumentsDaemon;

beforeAll(async () => {
  daemon = await startDocumentsDaemon();
  await daemon.couch.db.create("sturdy");
  const db = daemon.couch.use<Record<string, unknown>>("sturdy");
  await db.insert({ views: { v: { map: "function (doc) { emit(doc.n, 1); }", reduce: "_count" } } }, "_design/d");
  await db.bulk({ docs: [1, 2, 3].map((n) => ({ _id: `d${n}`, n })) });
});
afterAll(() => daemon.stop());

const PATHS = [
  "/sturdy",
  "/sturdy/d1",
  "/sturdy/_design/d",
  "/sturdy/_bulk_docs",
  "/sturdy/_all_docs",
  "/sturdy/_design_docs",
  "/sturdy/_changes",
  "/sturdy/_design/d/_view/v",
  "/sturdy/_design/d/_info",
  "/_all_dbs",
  "/missing-db/_all_docs",
];
const PARAMS = ["limit", "skip", "key", "keys", "startkey", "endkey", "descending", "include_docs", "inclusive_end", "group", "group_level", "reduce", "update", "stale", "since", "feed", "filter", "heartbeat", "timeout", "rev", "new_edits", "batch", "doc_ids", "style", "update_seq", "open_revs"];
const VALUES = fc.oneof(
  fc.constantFrom("", "true", "false", "-1", "0", "1", "abc", "null", '"d1"', "[1,2]", '["d1"]', "{}", "now", "longpoll", "continuous", "_design", "_doc_ids", "1-abc", "%ZZ", "\u00e9", "9".repeat(30)),
  fc.string({ maxLength: 12 }),
);
const BODIES = fc.oneof(
  fc.constant<string | undefined>(undefined),
  fc.constantFrom("{", "[]", "null", '{"docs":[{"_id":1}]}', '{"keys":"x"}', '{"keys":[1,{}]}', '{"_rev":5}', '{"doc_ids":[1]}', '{"docs":[{"_attachments":{}}]}', '{"queries":[]}'),
  fc.json().map((json) => json),
);

const requestArbitrary = fc
  .record({
    method: fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"),
    path: fc.constantFrom(...PATHS),
    params: fc.array(fc.tuple(fc.constantFrom(...PARAMS), VALUES), { maxLength: 4 }),
    body: BODIES,
  })
  // Deleting the db would only test the 404s after it.
  .filter(({ method, path }) => !(method === "DELETE" && path === "/sturdy"));

/** A longpoll would wait for a write: bounded here (no heartbeat, which waits without end; a 1 ms timeout). */
const boundedFeed = (params: readonly [string, string][]): URLSearchParams => {
  if (!params.some(([name]) => name === "feed")) return new URLSearchParams([...params]);
  return new URLSearchParams([...params.filter(([name]) => name !== "heartbeat" && name !== "timeout"), ["timeout", "1"]]);
};

describe("bad input on the document routes", () => {
  it("never gets a 5xx; 4xx answers carry CouchDB's error body", async () => {
    await fc.assert(
      fc.asyncProperty(requestArbitrary, async ({ method, path, params, body }) => {
        const query = boundedFeed(params);
        const response = await fetch(`${daemon.url}${path}?${query.toString()}`, {
          method,
          headers: { ...ADMIN_AUTH, "Content-Type": "application/json" },
          body: method === "GET" || method === "HEAD" ? undefined : body,
        });
        const text = await response.text();
        expect(response.status, `${method} ${path}?${query} ${body ?? ""} -> ${text}`).toBeLessThan(500);
        if (response.status >= 400 && method !== "HEAD") expect(JSON.parse(text)).toEqual({ error: expect.any(String), reason: expect.any(String) });
      }),
      { numRuns: 400 },
    );
    expect((await request(daemon, "GET", "/sturdy/d1")).status).toBe(200);
  });
});

describe("JSON nested deeper than any document", () => {
  const deep = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`;

  it.each([
    ["POST", "/sturdy/_all_docs", `{"keys":${deep(20_000)}}`],
    ["POST", "/sturdy/_bulk_docs", `{"docs":[{"a":${deep(20_000)}}]}`],
    ["PUT", "/sturdy/deep", `{"a":${deep(20_000)}}`],
    ["POST", "/sturdy/_design/d/_view/v", `{"keys":[${deep(20_000)}]}`],
    ["GET", `/sturdy/_all_docs?keys=[1,${deep(1_000)}]`, undefined],
    ["GET", `/sturdy/_design/d/_view/v?startkey=${deep(1_000)}`, undefined],
  ])("%s %s: 400, not a stack overflow", async (method, path, body) => {
    const answer = await request(daemon, method, path, { rawBody: body });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: "bad_request", reason: "JSON nested deeper than 512 levels" });
  });
});

describe("the store switched off", () => {
  it("answers 503 service_unavailable, and serves again when it is back", async () => {
    daemon.store.setAvailable(false);
    try {
      for (const [method, path] of [["GET", "/_all_dbs"], ["GET", "/sturdy"], ["PUT", "/sturdy/x"], ["GET", "/sturdy/_changes"], ["PUT", "/newdb"]] as const) {
        const answer = await request(daemon, method, path, { body: method === "PUT" ? {} : undefined });
        expect(answer.status, `${method} ${path}`).toBe(503);
        expect(answer.json).toEqual({ error: "service_unavailable", reason: "The embedded store is unavailable; try again later." });
      }
    } finally {
      daemon.store.setAvailable(true);
    }
    expect((await request(daemon, "GET", "/sturdy")).status).toBe(200);
  });

  it("keeps a waiting longpoll through an outage; the first write after it ends the wait", async () => {
    const since = ((await request(daemon, "GET", "/sturdy")).json as { update_seq: string }).update_seq;
    const response = await fetch(`${daemon.url}/sturdy/_changes?feed=longpoll&since=${since}`, { headers: ADMIN_AUTH });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.endsWith("[\n\n")) text += decoder.decode((await reader.read()).value, { stream: true });
    daemon.store.setAvailable(false);
    daemon.store.setAvailable(true);
    await daemon.couch.use<Record<string, unknown>>("sturdy").insert({ n: 9 }, "after-outage");
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    expect((JSON.parse(text) as { results: { id: string }[] }).results.map((r) => r.id)).toEqual(["after-outage"]);
  });
});
