/**
 * What the HTTP fuzzer (fuzz.test.ts) found, one focused test each, against
 * the real daemon over the in-memory store with `[admins]`: answers node
 * sent without CouchDB's body, a path read as a host, a 500 from describing
 * a deeply nested body, a handler that threw when a client left mid-body,
 * a 503 for a `since` no store can read, and (over the CouchDB adapter) a
 * 503 for credentials CouchDB refused as unreadable.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMemoryDaemon, startReplayedCouchDaemon, type FuzzDaemon } from "./fuzz/daemons.js";
import { parseResponses, type RawResponse } from "./fuzz/raw-responses.js";

let daemon: FuzzDaemon;
let admin: Record<string, string>;
beforeAll(async () => {
  daemon = await startMemoryDaemon();
  admin = { authorization: `Basic ${Buffer.from(`${daemon.admin.name}:${daemon.admin.password}`).toString("base64")}` };
});
afterAll(() => daemon.stop());

/** Writes `text`, half-closes after `endAfterMs`, and reads every response until the server closes. */
const raw = (text: string, endAfterMs = 0): Promise<RawResponse[]> =>
  new Promise((resolve, reject) => {
    const socket = connect({ port: daemon.port, host: "127.0.0.1", allowHalfOpen: true });
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    socket.on("end", () => socket.end());
    socket.on("close", () => resolve(parseResponses(received, ["GET"])));
    socket.on("error", reject);
    socket.write(text);
    setTimeout(() => socket.end(), endAfterMs);
  });

const json = (response: RawResponse | undefined): unknown => JSON.parse(response?.body ?? "");

describe("answers node would send bodiless now carry CouchDB's body", () => {
  it("an HTTP/1.1 request without Host: 400 bad_request (node's own 400 had no body)", async () => {
    const [answer] = await raw("GET /_up HTTP/1.1\r\n\r\n", 1_000);
    expect(answer?.status).toBe(400);
    expect(json(answer)).toEqual({ error: "bad_request", reason: "HTTP/1.1 requests need a Host header." });
  });

  it("an Expect other than 100-continue: 417 expectation_failed (node's own 417 had no body)", async () => {
    const [answer] = await raw("POST /_session HTTP/1.1\r\nHost: x\r\nExpect: the-unexpected\r\nContent-Length: 2\r\n\r\n{}", 1_000);
    expect(answer?.status).toBe(417);
    expect(json(answer)).toMatchObject({ error: "expectation_failed" });
  });

  it("HTTP/1.0 needs no Host, and 100-continue still works", async () => {
    expect((await raw("GET /_up HTTP/1.0\r\n\r\n", 1_000))[0]?.status).toBe(200);
    const body = '{"name":"boss","password":"s3cret"}';
    const answers = await raw(`POST /_session HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`, 1_000);
    expect(answers.map((a) => a.status)).toEqual([200]);
  });
});

describe("a target starting with // is a path, its slashes collapsed as CouchDB does", () => {
  it("GET //_db_updates is the feed, not the welcome of a host named _db_updates", async () => {
    const answer = await fetchRaw("//_db_updates");
    expect(answer.status).toBe(200);
    expect(json(answer)).toMatchObject({ results: [] });
  });

  it("GET //evil.example/_up is /evil.example/_up: 404, not the health check", async () => {
    expect((await fetchRaw("//evil.example/_up")).status).toBe(404);
  });

  it("an absolute-form target keeps its path (HTTP/1.1 servers must accept it)", async () => {
    expect(json(await fetchRaw("http://elsewhere.example/_up"))).toEqual({ status: "ok" });
  });
});

/** One GET with the admin's credentials, the target sent exactly as written (fetch would normalize it). */
async function fetchRaw(target: string): Promise<RawResponse> {
  const [answer] = await raw(`GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: ${admin.authorization}\r\nConnection: close\r\n\r\n`, 1_000);
  if (answer === undefined) throw new Error(`no answer to GET ${target}`);
  return answer;
}

describe("bodies", () => {
  it("a body nested 20,000 deep: 400 naming the field, not a 500 from JSON.stringify's stack", async () => {
    const deep = "[".repeat(20_000) + "]".repeat(20_000);
    const response = await fetch(`${daemon.url}/_smoosh/enqueue`, { method: "POST", headers: { ...admin, "content-type": "application/json" }, body: deep });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "bad_request", reason: "request body: expected a JSON object {\"db\", \"ddoc\"?}, got an array nested too deeply to show" });
  });

  it("POST /_session: a client gone mid-body is no handler failure, and the server goes on", async () => {
    await raw("POST /_session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"name\":");
    await raw("POST /_session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"nam\r\n");
    expect((await fetch(`${daemon.url}/_up`)).status).toBe(200);
    expect(daemon.errorsLogged).toEqual([]);
  });

  it("POST /_session with a chunked body over 64 KiB: CouchDB's 413, not a dropped connection", async () => {
    const big = JSON.stringify({ name: "boss", password: "x".repeat(70_000) });
    const chunks = [big.slice(0, 30_000), big.slice(30_000)].map((part) => `${part.length.toString(16)}\r\n${part}\r\n`).join("");
    const answers = await raw(`POST /_session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks}0\r\n\r\n`, 1_000);
    expect(answers[0]?.status).toBe(413);
    expect(json(answers[0])).toMatchObject({ error: "too_large" });
  });
});

describe("/_db_updates?since", () => {
  it.each(["99999999999999999999", "99999999999999999999-g1AAAA", "007"])("since=%s is CouchDB's 400 Malformed sequence, not a 503 from the store", async (since) => {
    const response = await fetch(`${daemon.url}/_db_updates?since=${since}`, { headers: admin });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "bad_request", reason: "Malformed sequence supplied in 'since' parameter." });
  });
});

describe("credentials CouchDB cannot read (its /_session answers 400)", () => {
  let couchDaemon: FuzzDaemon;
  beforeAll(async () => {
    couchDaemon = await startReplayedCouchDaemon();
  });
  afterAll(() => couchDaemon.stop());

  it.each([
    ["a Basic value that is not base64", { authorization: "Basic !!!" }],
    ["a malformed AuthSession cookie", { cookie: "AuthSession=garbage" }],
  ])("%s: 401 Name or password is incorrect, not a 503 as if CouchDB were down", async (_what, headers) => {
    const response = await fetch(`${couchDaemon.url}/_smoosh/status`, { headers });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "unauthorized", reason: "Name or password is incorrect." });
  });
});
