/**
 * `_changes?feed=longpoll` over a raw streaming read: the server says it is
 * waiting (a newline after `{"results":[`), then a write ends the wait with
 * that change; heartbeats while waiting; a timeout ends it empty; the db's
 * deletion ends it; a client that goes away frees its place (the waiter
 * bound shows it); past the bound, 503.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_AUTH, request, startDocumentsDaemon, type DocumentsDaemon } from "./harness.js";

let daemon: DocumentsDaemon;

beforeAll(async () => {
  daemon = await startDocumentsDaemon({ maxWaiters: 2 });
  await daemon.couch.db.create("feed");
  await feedDb().insert({ n: 0 }, "first");
});
afterAll(() => daemon.stop());

/** An open longpoll, read as it streams. */
interface OpenFeed {
  /** Resolves once `count` newlines have arrived (the first ends `{"results":[`, the second says "waiting"). */
  newlines(count: number): Promise<void>;
  /** The whole body, parsed, once the server ends it. */
  body(): Promise<{ results: { id: string }[]; last_seq: string; pending: number }>;
  abort(): void;
}

async function openLongpoll(query: string): Promise<OpenFeed> {
  const abort = new AbortController();
  const response = await fetch(`${daemon.url}/feed/_changes?feed=longpoll&${query}`, { headers: ADMIN_AUTH, signal: abort.signal });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  let ended = false;
  const readMore = async (): Promise<void> => {
    const { value, done } = await reader.read();
    if (done) ended = true;
    else text += decoder.decode(value, { stream: true });
  };
  return {
    async newlines(count) {
      while ((text.match(/\n/g) ?? []).length < count && !ended) await readMore();
    },
    async body() {
      while (!ended) await readMore();
      return JSON.parse(text) as Awaited<ReturnType<OpenFeed["body"]>>;
    },
    abort: () => abort.abort(),
  };
}

const feedDb = () => daemon.couch.use<Record<string, unknown>>("feed");

const currentSeq = async (): Promise<string> => ((await request(daemon, "GET", "/feed")).json as { update_seq: string }).update_seq;

describe("longpoll _changes on the embedded store", () => {
  it("waits, and a write during the wait ends it with that change", async () => {
    const feed = await openLongpoll("since=now");
    await feed.newlines(2);
    await feedDb().insert({ n: 1 }, "written-while-waiting");
    const body = await feed.body();
    expect(body.results.map((r) => r.id)).toEqual(["written-while-waiting"]);
    expect(body.last_seq).toBe(await currentSeq());
    expect(body.pending).toBe(0);
  });

  it("answers at once when there are changes after since", async () => {
    const body = await (await openLongpoll("since=0&limit=1")).body();
    expect(body.results.map((r) => r.id)).toEqual(["first"]);
    expect(body.pending).toBeGreaterThan(0);
  });

  it("keeps waiting past writes its filter does not want", async () => {
    const feed = await openLongpoll("since=now&filter=_design");
    await feed.newlines(2);
    await feedDb().insert({ n: 2 }, "not-a-design-doc");
    await feedDb().insert({ views: {} }, "_design/wanted");
    expect((await feed.body()).results.map((r) => r.id)).toEqual(["_design/wanted"]);
  });

  it("sends a newline every heartbeat while waiting", async () => {
    const feed = await openLongpoll("since=now&heartbeat=100");
    await feed.newlines(4); // open, waiting, then two beats
    await feedDb().insert({ n: 3 }, "after-beats");
    expect((await feed.body()).results.map((r) => r.id)).toEqual(["after-beats"]);
  });

  it("ends empty when the timeout passes, at the seq it waited from", async () => {
    const since = await currentSeq();
    const body = await (await openLongpoll(`since=${since}&timeout=20`)).body();
    expect(body).toEqual({ results: [], last_seq: since, pending: 0 });
  });

  it("ends when the db is deleted", async () => {
    await daemon.couch.db.create("doomed");
    const abort = new AbortController();
    const response = await fetch(`${daemon.url}/doomed/_changes?feed=longpoll&since=now`, { headers: ADMIN_AUTH, signal: abort.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    while (!text.includes("[\n\n")) text += new TextDecoder().decode((await reader.read()).value);
    await daemon.couch.db.destroy("doomed");
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
    expect(JSON.parse(text)).toMatchObject({ results: [] });
  });

  it("frees a waiter whose client went away, and refuses more than the bound with 503", async () => {
    const first = await openLongpoll("since=now");
    const second = await openLongpoll("since=now");
    await first.newlines(2);
    await second.newlines(2);
    const third = await request(daemon, "GET", "/feed/_changes?feed=longpoll&since=now");
    expect(third.status).toBe(503);
    expect(third.json).toEqual({ error: "service_unavailable", reason: "2 clients are already waiting for changes; try again later." });
    first.abort();
    second.abort();
    // Both places come free when their clients are gone: two new waiters fit again.
    const again = [await openLongpoll("since=now"), await openLongpoll("since=now")];
    await Promise.all(again.map((feed) => feed.newlines(2)));
    await feedDb().insert({ n: 4 }, "for-both");
    for (const feed of again) expect((await feed.body()).results.map((r) => r.id)).toEqual(["for-both"]);
  });
});
