import { afterAll, beforeAll, describe, expect, it } from "vitest";
import nano from "nano";
import { EventSource } from "eventsource";
import { ADMIN, ADMIN_AUTH, basicAuth, rawGet, rawStream, startHarness, waitFor, type Harness } from "./helpers.js";

interface Row {
  db_name: string;
  type: string;
  seq: string;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const auth = { authorization: ADMIN_AUTH };
const feedHas = async (db: string, type: string) => {
  const r = await rawGet(`${h.url}/_db_updates`, auth);
  return (JSON.parse(r.body) as { results: Row[] }).results.some((x) => x.db_name === db && x.type === type);
};

describe("/_db_updates errors, as CouchDB 3.4 answers", () => {
  it("401 without credentials, with a wrong password, and for a non-admin cookie-less user", async () => {
    const none = await rawGet(`${h.url}/_db_updates`);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toEqual({ error: "unauthorized", reason: "You are not a server admin." });
    expect(none.headers["www-authenticate"]).toBeUndefined();
    const wrong = await rawGet(`${h.url}/_db_updates`, { authorization: basicAuth(ADMIN.name, "nope") });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toEqual({ error: "unauthorized", reason: "Name or password is incorrect." });
  });

  it("400 for bad parameters (fixtures 83-85), 405 for other methods", async () => {
    const cases: [string, string][] = [
      ["limit=abc", 'invalid_integer: limit must be a non-negative integer, got "abc"'],
      ["feed=bogus", "Supported `feed` types: normal, continuous, longpoll, eventsource"],
      ["since=bogus", "Malformed sequence supplied in 'since' parameter."],
    ];
    for (const [qs, reason] of cases) {
      const r = await rawGet(`${h.url}/_db_updates?${qs}`, auth);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body)).toEqual({ error: "bad_request", reason });
    }
    const post = await rawGet(`${h.url}/_db_updates`, auth, "POST");
    expect(post.status).toBe(405);
  });
});

describe("normal feed", () => {
  it("nano reads created/updated/deleted rows; ETag and If-None-Match give 304", async () => {
    h.store.createDb("alpha");
    h.store.putDoc("alpha", { _id: "doc1", v: 1 });
    h.store.createDb("team/beta");
    h.store.deleteDb("team/beta");
    await waitFor(() => feedHas("team/beta", "deleted"), "the deletion in the feed");

    const couch = nano(h.url.replace("http://", `http://${ADMIN.name}:${ADMIN.password}@`));
    const updates = (await couch.updates()) as unknown as { results: Row[]; last_seq: string };
    const seen = updates.results.map((r) => `${r.type}:${r.db_name}`);
    expect(seen).toEqual(expect.arrayContaining(["created:alpha", "updated:alpha", "created:team/beta", "deleted:team/beta"]));
    for (const r of updates.results) expect(Object.keys(r)).toEqual(["db_name", "type", "seq"]);
    expect(updates.results.some((r) => r.db_name === h.subsystem.service.feedDbName)).toBe(false);

    const first = await rawGet(`${h.url}/_db_updates`, auth);
    expect(first.body.startsWith('{"results":[\n')).toBe(true);
    expect(first.body).toMatch(/\n\],\n"last_seq":"[^"]+"\}\n$/);
    expect(first.body.split(",\r\n").length).toBe(updates.results.length);
    const etag = first.headers["etag"] as string;
    expect(etag).toMatch(/^"[0-9A-Z]{25}"$/);
    const again = await rawGet(`${h.url}/_db_updates`, { ...auth, "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.body).toBe("");
    h.store.createDb("gamma");
    await waitFor(() => feedHas("gamma", "created"), "gamma in the feed");
    const changed = await rawGet(`${h.url}/_db_updates`, { ...auth, "if-none-match": etag });
    expect(changed.status).toBe(200);
  });

  it("descending=true&limit=2: newest first, last_seq is the last row's seq (fixture 82); since resumes", async () => {
    const r = JSON.parse((await rawGet(`${h.url}/_db_updates?descending=true&limit=2`, auth)).body) as { results: Row[]; last_seq: string };
    expect(r.results).toHaveLength(2);
    expect(Number(r.results[0]!.seq)).toBeGreaterThan(Number(r.results[1]!.seq));
    expect(r.last_seq).toBe(r.results[1]!.seq);
    const all = JSON.parse((await rawGet(`${h.url}/_db_updates`, auth)).body) as { results: Row[]; last_seq: string };
    const mid = all.results[1]!.seq;
    const after = JSON.parse((await rawGet(`${h.url}/_db_updates?since=${mid}`, auth)).body) as { results: Row[] };
    expect(after.results).toEqual(all.results.slice(2));
  });
});

describe("longpoll, continuous, eventsource", () => {
  it("longpoll sends nothing until an event, then CouchDB's exact framing", async () => {
    const s = rawStream(`${h.url}/_db_updates?feed=longpoll&since=now&timeout=30000`, auth);
    // The feed is idle: give the request time to be waiting, then write.
    await new Promise((r) => setTimeout(r, 100));
    expect(s.headersReceived).toBe(false);
    h.store.createDb("lp_db");
    await waitFor(() => s.ended, "the longpoll answer");
    expect(s.status).toBe(200);
    expect(s.body).toMatch(/^\{"results":\[\n\{"db_name":"lp_db","type":"created","seq":"\d+"\}\n\],\n"last_seq":"\d+"\}\n$/);
  });

  it("longpoll with nothing to say answers after the timeout with no rows", async () => {
    const r = await rawGet(`${h.url}/_db_updates?feed=longpoll&since=now&timeout=50`, auth);
    expect(r.body).toMatch(/^\{"results":\[\n\n\],\n"last_seq":"\d+"\}\n$/);
  });

  it("continuous: a row per line, heartbeat newlines, stays open past timeout when heartbeating", async () => {
    const s = rawStream(`${h.url}/_db_updates?feed=continuous&since=now&timeout=100&heartbeat=100`, auth);
    await waitFor(() => s.body.includes("\n"), "a heartbeat");
    h.store.createDb("c_db");
    h.store.putDoc("c_db", { _id: "x" });
    await waitFor(() => s.body.includes('"db_name":"c_db","type":"updated"'), "the update row");
    const before = s.body.length;
    await waitFor(() => s.body.length > before + 1, "more heartbeats after the timeout");
    expect(s.ended).toBe(false);
    for (const line of s.body.split("\n").filter((l) => l.length > 0)) {
      expect(Object.keys(JSON.parse(line) as object)).toEqual(["db_name", "type", "seq"]);
    }
    s.abort();
    await waitFor(() => h.subsystem.metrics().subscribers === 0, "the vanished client to be cleaned up");
  });

  it("continuous without heartbeat ends after the timeout with {last_seq} (fixture 79); limit ends it too", async () => {
    const r = await rawGet(`${h.url}/_db_updates?feed=continuous&since=now&timeout=50`, auth);
    expect(r.body).toMatch(/^\{"last_seq":"\d+"\}\n$/);
    const limited = await rawGet(`${h.url}/_db_updates?feed=continuous&limit=2`, auth);
    const lines = limited.body.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2]!)).toEqual({ last_seq: (JSON.parse(lines[1]!) as Row).seq });
  });

  it("eventsource works with a real EventSource client (unlike CouchDB 3.4.3, fixture 80)", async () => {
    const events: Row[] = [];
    const ids: string[] = [];
    const es = new EventSource(`${h.url}/_db_updates?feed=eventsource&since=now&heartbeat=100`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: ADMIN_AUTH } }),
    });
    let heartbeats = 0;
    es.addEventListener("heartbeat", () => heartbeats++);
    es.onmessage = (e) => {
      events.push(JSON.parse(e.data as string) as Row);
      ids.push(e.lastEventId);
    };
    await new Promise<void>((resolve, reject) => {
      es.onopen = () => resolve();
      es.onerror = (e) => reject(new Error(String(e.message)));
    });
    h.store.createDb("es_db");
    await waitFor(() => events.some((e) => e.db_name === "es_db"), "the eventsource event");
    await waitFor(() => heartbeats > 0, "a heartbeat event");
    es.close();
    const row = events.find((e) => e.db_name === "es_db")!;
    expect(row).toEqual({ db_name: "es_db", type: "created", seq: row.seq });
    expect(ids[events.indexOf(row)]).toBe(row.seq);
  });
});

describe("cookie sessions", () => {
  it("POST /_session issues an AuthSession cookie that opens /_db_updates; DELETE clears it", async () => {
    const login = await fetch(`${h.url}/_session`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `name=${ADMIN.name}&password=${ADMIN.password}`,
    });
    expect(login.status).toBe(200);
    expect(await login.json()).toEqual({ ok: true, name: "admin", roles: ["_admin"] });
    const setCookie = login.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^AuthSession=[^;]+; Version=1; Expires=.+; Max-Age=600; Path=\/; HttpOnly$/);
    const cookie = setCookie.split(";")[0]!;
    const feed = await rawGet(`${h.url}/_db_updates`, { cookie });
    expect(feed.status).toBe(200);
    const session = (await (await fetch(`${h.url}/_session`, { headers: { cookie } })).json()) as Record<string, unknown>;
    expect(session).toEqual({ ok: true, userCtx: { name: "admin", roles: ["_admin"] }, info: { authentication_handlers: ["cookie", "default"], authenticated: "cookie" } });
    const forged = cookie.slice(0, -2) + (cookie.endsWith("AA") ? "BB" : "AA");
    expect((await rawGet(`${h.url}/_db_updates`, { cookie: forged })).status).toBe(401);
    const bad = await fetch(`${h.url}/_session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "admin", password: "x" }) });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ error: "unauthorized", reason: "Name or password is incorrect." });
    const out = await fetch(`${h.url}/_session`, { method: "DELETE" });
    expect(out.headers.get("set-cookie")).toMatch(/^AuthSession=;/);
  });
});
