/**
 * The recorded CouchDB 3.4.3 exchanges of test/fixtures/couchdb-3.4.3-docs,
 * replayed in order against upholster's embedded store: same requests (revs
 * translated to ours as we learn them, generated ids given as CouchDB gave
 * them), same status codes, same bodies once what must differ is set aside:
 * revs (equal generations, different hashes), seqs (CouchDB's `N-opaque` vs
 * our `N`), sizes and instance times. The view exchanges go to the memory
 * store's own view engine.
 *
 * Where upholster differs on purpose, the test says how (DIFFERENCES).
 * CouchDB's `_changes` across two shards is not in seq order, so changes
 * are compared as sets, by count and `pending` (CHANGES).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_AUTH, basicAuth, startDocumentsDaemon, type DocumentsDaemon } from "./harness.js";

interface Action {
  readonly action: string;
  readonly body?: unknown;
}

interface Exchange {
  readonly file: string;
  readonly description: string;
  readonly request: { readonly method: string; readonly path: string; readonly headers: Record<string, string>; readonly body: unknown };
  readonly response: { readonly status: number; readonly headers: Record<string, string>; readonly body: unknown };
  readonly timing?: { readonly actions_during_request: readonly Action[] };
}

const FIXTURES = join(import.meta.dirname, "../../fixtures/couchdb-3.4.3-docs");
const exchanges: Exchange[] = readdirSync(FIXTURES)
  .filter((file) => /^\d+-.*\.json$/.test(file))
  .sort()
  .map((file) => ({ file, ...(JSON.parse(readFileSync(join(FIXTURES, file), "utf8")) as Omit<Exchange, "file">) }));

/** Deliberate differences: the same status and `error`; our reason names the parameter (and value). */
const DIFFERENT_REASON: Readonly<Record<string, RegExp>> = {
  "24-put-doc-invalid-json.json": /^the request body is not JSON/,
};
/**
 * CouchDB answers 500 `badarg` to `timeout=abc`; we answer 400 naming it.
 * `/{db}/_x` paths are not routed to documents (they may be other routes'):
 * the server's 404 where CouchDB says 400 `illegal_docid`.
 */
const DIFFERENT_STATUS: Readonly<Record<string, { status: number; error: string; reason: RegExp }>> = {
  "23-put-doc-underscore-id.json": { status: 404, error: "not_found", reason: /^missing$/ },
  "61-changes-bad-timeout.json": { status: 400, error: "bad_request", reason: /^timeout must be a non-negative integer, got "abc"$/ },
};
/** A view group's `_info`: CouchDB's members, at every level; its numbers are the index's own. */
const SAME_MEMBERS = new Set(["77-view-info.json"]);

const membersOf = (value: unknown): unknown =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).map(([name, member]) => [name, membersOf(member)]).sort(([a], [b]) => String(a).localeCompare(String(b))))
    : typeof value;

const REV = /^(\d+)-[0-9a-f]{32}$/;
const SEQ = /^(\d+)(-.*)?$/;
const SEQ_MEMBERS = new Set(["seq", "last_seq", "update_seq", "purge_seq"]);

/** Revs keep their generation, seqs their number; sizes, times and the shard count (CouchDB's q=2, our one file) are ours. */
function normalized(value: unknown, member = ""): unknown {
  if (typeof value === "string") {
    if (SEQ_MEMBERS.has(member) && SEQ.test(value)) return (SEQ.exec(value) as RegExpExecArray)[1];
    if (member === "instance_start_time") return "<time>";
    return REV.test(value) ? `${(REV.exec(value) as RegExpExecArray)[1]}-<rev>` : value;
  }
  if (typeof value === "number" && ["file", "active", "external"].includes(member)) return "<bytes>";
  if (member === "q") return "<q>";
  if (Array.isArray(value)) return value.map((item) => normalized(item));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalized(v, k)]));
  return value;
}

/** Learns CouchDB's revs → ours, walking both bodies side by side. */
function learnRevs(recorded: unknown, ours: unknown, revs: Map<string, string>): void {
  if (typeof recorded === "string" && typeof ours === "string" && REV.test(recorded) && REV.test(ours)) revs.set(recorded, ours);
  else if (Array.isArray(recorded) && Array.isArray(ours)) recorded.forEach((item, i) => learnRevs(item, ours[i], revs));
  else if (recorded !== null && typeof recorded === "object" && ours !== null && typeof ours === "object") {
    for (const [key, value] of Object.entries(recorded)) learnRevs(value, (ours as Record<string, unknown>)[key], revs);
  }
}

const translated = (text: string, revs: ReadonlyMap<string, string>): string => {
  let out = text;
  for (const [couch, ours] of revs) out = out.split(couch).join(ours);
  return out;
};

function headersFor(exchange: Exchange, revs: ReadonlyMap<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(exchange.request.headers)) {
    if (name === "Authorization") Object.assign(headers, exchange.file.includes("wrong-password") ? basicAuth("admin", "wrong") : ADMIN_AUTH);
    else headers[name] = translated(value, revs);
  }
  return headers;
}

function bodyFor(exchange: Exchange, revs: ReadonlyMap<string, string>): string | undefined {
  const body = exchange.request.body;
  if (body === null || body === undefined) return undefined;
  return translated(typeof body === "string" ? body : JSON.stringify(body), revs);
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

async function send(daemon: DocumentsDaemon, exchange: Exchange, revs: ReadonlyMap<string, string>): Promise<Answer> {
  const response = await fetch(`${daemon.url}${translated(exchange.request.path, revs)}`, {
    method: exchange.request.method,
    headers: headersFor(exchange, revs),
    body: bodyFor(exchange, revs),
  });
  const actions = exchange.timing?.actions_during_request ?? [];
  const text = actions.length === 0 ? await response.text() : await readDuring(daemon, response, actions);
  return { status: response.status, headers: response.headers, body: text === "" ? null : (JSON.parse(text) as unknown) };
}

/**
 * A longpoll with writes during the wait: once the server said it waits
 * (the newline after `{"results":[`, and with a heartbeat one beat more),
 * the recorded writes are made; the feed must then end with them.
 */
async function readDuring(daemon: DocumentsDaemon, response: Response, actions: readonly Action[]): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  const newlinesBeforeWrite = response.url.includes("heartbeat=") ? 3 : 2;
  while ((text.match(/\n/g) ?? []).length < newlinesBeforeWrite) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the feed ended before the write: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  for (const action of actions) {
    const [method, path] = action.action.split(" ");
    const written = await fetch(`${daemon.url}${path}`, { method, headers: { ...ADMIN_AUTH, "Content-Type": "application/json" }, body: JSON.stringify(action.body) });
    expect(written.status).toBe(201);
  }
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}

type Changes = { results: { id: string; changes: { rev: string }[]; deleted?: boolean }[]; last_seq: string; pending: number };

/** Changes: same rows as a set (CouchDB's two shards interleave), same count; `pending` where `limit` cut the list. */
function expectSameChanges(exchange: Exchange, ours: Changes, recorded: Changes): void {
  expect(ours.results).toHaveLength(recorded.results.length);
  const rowsOf = (c: Changes) => normalized(c.results.map(({ id, changes, deleted }) => ({ id, changes, deleted })));
  const limited = /[?&]limit=/.test(exchange.request.path);
  if (!limited) {
    expect(rowsOf(ours)).toEqual(expect.arrayContaining(rowsOf(recorded) as unknown[]));
    expect(normalized(ours.last_seq, "last_seq")).toBe(normalized(recorded.last_seq, "last_seq"));
  } else expect(ours.pending).toBe(recorded.pending);
}

const isChanges = (exchange: Exchange): boolean => /\/_changes/.test(exchange.request.path) && exchange.response.status === 200;

/**
 * The key order of every document in a body (an object with a string `_id`
 * and `_rev`), sorted: clients that print or hash a doc see CouchDB's order
 * (`_id`, `_rev`, the body, `_deleted`). Sorted, as changes rows may come
 * in another order (CHANGES).
 */
function docKeyOrders(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item) => docKeyOrders(item, found));
  else if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    if (typeof record["_id"] === "string" && typeof record["_rev"] === "string") found.push(Object.keys(record).join(","));
    Object.values(record).forEach((member) => docKeyOrders(member, found));
  }
  return found.sort();
}

function expectSameAnswer(exchange: Exchange, ours: Answer): void {
  const recorded = exchange.response;
  const different = DIFFERENT_STATUS[exchange.file];
  if (different !== undefined) {
    expect(ours.status).toBe(different.status);
    expect(ours.body).toMatchObject({ error: different.error, reason: expect.stringMatching(different.reason) });
    return;
  }
  expect(ours.status).toBe(recorded.status);
  const reason = DIFFERENT_REASON[exchange.file];
  if (reason !== undefined) expect(ours.body).toEqual({ error: (recorded.body as { error: string }).error, reason: expect.stringMatching(reason) });
  else if (SAME_MEMBERS.has(exchange.file)) expect(membersOf(ours.body)).toEqual(membersOf(recorded.body));
  else if (isChanges(exchange)) {
    const body = typeof recorded.body === "string" ? (JSON.parse(recorded.body) as Changes) : (recorded.body as Changes);
    expectSameChanges(exchange, ours.body as Changes, body);
  } else expect(normalized(ours.body)).toEqual(normalized(recorded.body));
  const recordedBody = typeof recorded.body === "string" && isChanges(exchange) ? (JSON.parse(recorded.body) as unknown) : recorded.body;
  expect(docKeyOrders(ours.body)).toEqual(docKeyOrders(recordedBody));
  expectSameHeaders(exchange, ours);
}

/** `ETag` where CouchDB sends one (docs: the quoted rev), `Location` with the same path. */
function expectSameHeaders(exchange: Exchange, ours: Answer): void {
  const recorded = exchange.response.headers;
  const etag = recorded["ETag"] ?? recorded["Etag"];
  if (etag !== undefined && REV.test(etag.replaceAll('"', ""))) expect(normalized(ours.headers.get("etag")?.replaceAll('"', ""))).toBe(normalized(etag.replaceAll('"', "")));
  const location = recorded["Location"];
  if (location !== undefined) expect(new URL(ours.headers.get("location") ?? "http://x/none").pathname).toBe(new URL(location).pathname);
}

/** The ids CouchDB generated, in the order it generated them (26, then the doc without `_id` in 37). */
function recordedGeneratedIds(): string[] {
  const ids: string[] = [];
  for (const exchange of exchanges) {
    const body = exchange.response.body;
    if (exchange.request.method === "POST" && exchange.request.path === "/fx_docs" && exchange.response.status === 201) ids.push((body as { id: string }).id);
    if (exchange.file.endsWith("-bulk-docs.json")) {
      for (const row of body as { id: string }[]) if (/^[0-9a-f]{32}$/.test(row.id)) ids.push(row.id);
    }
  }
  return ids;
}

describe("CouchDB 3.4.3's recorded document API exchanges, replayed against the embedded store", () => {
  let daemon: DocumentsDaemon;
  const revs = new Map<string, string>();

  beforeAll(async () => {
    const ids = recordedGeneratedIds();
    daemon = await startDocumentsDaemon({ newDocId: () => ids.shift() ?? "no-more-recorded-ids" });
  });
  afterAll(() => daemon.stop());

  it("has the recordings", () => {
    expect(exchanges.length).toBeGreaterThan(80);
  });

  for (const exchange of exchanges) {
    it(`${exchange.file}: ${exchange.request.method} ${exchange.request.path.slice(0, 80)} -> ${exchange.response.status}`, async () => {
      const ours = await send(daemon, exchange, revs);
      learnRevs(exchange.response.body, ours.body, revs);
      expectSameAnswer(exchange, ours);
    });
  }
});
