/**
 * The same admin rule as the rest of the server, with CouchDB 3.4's bodies
 * (fixtures 04, 07, 08, 12, 76, 80): listing, creating and deleting dbs is
 * for server admins; everything in a db for its readers, which on the
 * embedded store (no `_security`) are the server admins. Basic auth and
 * `_session` cookies both work.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, basicAuth, request, startDocumentsDaemon, type DocumentsDaemon } from "./harness.js";

const NOT_SERVER_ADMIN = { error: "unauthorized", reason: "You are not a server admin." };
const NOT_DB_READER = { error: "unauthorized", reason: "You are not authorized to access this db." };
const BAD_CREDENTIALS = { error: "unauthorized", reason: "Name or password is incorrect." };

let daemon: DocumentsDaemon;

beforeAll(async () => {
  daemon = await startDocumentsDaemon();
  await daemon.couch.db.create("guarded");
  await daemon.couch.use<Record<string, unknown>>("guarded").insert({ views: { v: { map: "function (doc) { emit(doc._id, null); }" } } }, "_design/d");
});
afterAll(() => daemon.stop());

const SERVER_ADMIN_ROUTES = [
  ["GET", "/_all_dbs"],
  ["PUT", "/another"],
  ["DELETE", "/guarded"],
] as const;

const DB_READER_ROUTES = [
  ["GET", "/guarded"],
  ["HEAD", "/guarded"],
  ["POST", "/guarded"],
  ["GET", "/guarded/doc"],
  ["PUT", "/guarded/doc"],
  ["DELETE", "/guarded/doc"],
  ["GET", "/guarded/_design/d"],
  ["POST", "/guarded/_bulk_docs"],
  ["GET", "/guarded/_all_docs"],
  ["POST", "/guarded/_all_docs"],
  ["GET", "/guarded/_design_docs"],
  ["GET", "/guarded/_changes"],
  ["GET", "/guarded/_changes?feed=longpoll"],
  ["GET", "/guarded/_design/d/_view/v"],
  ["POST", "/guarded/_design/d/_view/v"],
  ["GET", "/guarded/_design/d/_info"],
  // Access first, then the method (405 only for who may call the path).
  ["PATCH", "/guarded/_all_docs"],
] as const;

describe("who may call the document API", () => {
  it.each(SERVER_ADMIN_ROUTES)("%s %s without credentials: 401 not a server admin", async (method, path) => {
    const answer = await request(daemon, method, path, { anonymous: true });
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual(NOT_SERVER_ADMIN);
  });

  it.each(DB_READER_ROUTES)("%s %s without credentials: 401 not authorized to access this db", async (method, path) => {
    const answer = await request(daemon, method, path, { anonymous: true, body: method === "POST" || method === "PUT" ? {} : undefined });
    expect(answer.status).toBe(401);
    if (method !== "HEAD") expect(answer.json).toEqual(NOT_DB_READER);
  });

  it.each([...SERVER_ADMIN_ROUTES, ...DB_READER_ROUTES])("%s %s with a wrong password: 401 name or password is incorrect", async (method, path) => {
    const answer = await request(daemon, method, path, { anonymous: true, headers: basicAuth(ADMIN.name, "wrong") });
    expect(answer.status).toBe(401);
    if (method !== "HEAD") expect(answer.json).toEqual(BAD_CREDENTIALS);
  });

  it("lets a server admin in with basic auth", async () => {
    expect((await request(daemon, "GET", "/_all_dbs")).json).toContain("guarded");
    expect((await request(daemon, "PUT", "/another")).status).toBe(201);
    expect((await request(daemon, "GET", "/guarded/_all_docs")).status).toBe(200);
    expect((await request(daemon, "PATCH", "/guarded/_all_docs")).status).toBe(405);
  });

  it("lets a server admin in with a _session cookie", async () => {
    const login = await fetch(`${daemon.url}/_session`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: ADMIN.name, password: ADMIN.password }),
    });
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect(cookie).toMatch(/^AuthSession=/);
    const answer = await request(daemon, "GET", "/guarded", { anonymous: true, headers: { Cookie: cookie } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ db_name: "guarded" });
  });
});
