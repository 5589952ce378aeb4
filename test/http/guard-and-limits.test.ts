/**
 * The server's one guard for a route that declares "reader of db X" (the
 * rule indexing and geo routes will use), and what node's HTTP parser
 * refuses before any route sees it: an oversized header or URL is a 431 with
 * a CouchDB-style JSON body, garbage a 400, and the server keeps serving.
 */
import { connect } from "node:net";
import { maxHeaderSize, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer, type HttpServer } from "../../src/http/server.js";
import { routeTable } from "../../src/http/router.js";
import { sendJson } from "../../src/http/respond.js";
import { dbReader } from "../../src/http/auth/access.js";
import { createGuard, type DbSecurity } from "../../src/http/auth/guard.js";
import { createRecordingLogger } from "../../src/adapters/logging/index.js";
import { userTableAuthenticator } from "../support/user-table.js";

/** Users with roles, as CouchDB's `_users` would have them: the authority the guard asks. */
const users = userTableAuthenticator({
  boss: { password: "pw", roles: ["_admin"] },
  ann: { password: "pw", roles: ["readers"] },
});
/** `_security` of two dbs: ann reads `shared`, nobody but admins reads `private`. */
const security: DbSecurity = { isReader: async (who, db) => db === "shared" && who.name === "ann" };

let server: HttpServer;
let base: string;
beforeAll(async () => {
  server = createHttpServer({
    routes: [
      routeTable([
        {
          path: /^\/([a-z]+)\/_probe$/,
          access: (params) => dbReader(params[0] ?? ""),
          methods: { GET: ({ res, admission }) => sendJson(res, 200, { name: admission.principal?.name ?? null, admin: admission.isAdmin }) },
        },
      ]),
    ],
    guard: createGuard({ authenticator: users, dbSecurity: security }),
    nodeName: "upholster@127.0.0.1",
    logger: createRecordingLogger(),
  });
  base = (await server.listen()).url;
});
afterAll(() => server.close());

const get = async (path: string, user?: string) => {
  const headers: Record<string, string> = user === undefined ? {} : { Authorization: `Basic ${Buffer.from(user).toString("base64")}` };
  const response = await fetch(`${base}${path}`, { headers });
  return { status: response.status, body: (await response.json()) as unknown };
};

describe("a db reader route", () => {
  it("anonymous: 401, a named non-member: 403, as CouchDB's _security answers", async () => {
    expect(await get("/private/_probe")).toEqual({ status: 401, body: { error: "unauthorized", reason: "You are not authorized to access this db." } });
    expect(await get("/private/_probe", "ann:pw")).toEqual({ status: 403, body: { error: "forbidden", reason: "You are not allowed to access this db." } });
    expect(await get("/private/_probe", "ann:wrong")).toEqual({ status: 401, body: { error: "unauthorized", reason: "Name or password is incorrect." } });
  });

  it("a member and any server admin get in, and the route knows who", async () => {
    expect(await get("/shared/_probe", "ann:pw")).toEqual({ status: 200, body: { name: "ann", admin: false } });
    expect(await get("/private/_probe", "boss:pw")).toEqual({ status: 200, body: { name: "boss", admin: true } });
  });
});

/** A raw HTTP/1.1 exchange: what the server writes back before closing. */
const raw = (text: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(base).port), "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString()));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.end(text);
  });

const statusAndBody = (answer: string) => {
  const [head = "", body = ""] = answer.split("\r\n\r\n");
  return { statusLine: head.split("\r\n")[0], contentType: /content-type: ([^\r]+)/i.exec(head)?.[1], body: JSON.parse(body) as unknown };
};

describe("requests node's parser refuses", () => {
  it("a header over node's maxHeaderSize: 431 with a JSON body, then the connection closes", async () => {
    const answer = statusAndBody(await raw(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"x".repeat(20_000)}\r\n\r\n`));
    expect(answer.statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(answer.contentType).toBe("application/json");
    expect(answer.body).toEqual({ error: "header_too_large", reason: `The request line and headers are larger than ${maxHeaderSize} bytes.` });
  });

  it("a URL over the limit: the same 431, through an ordinary client", async () => {
    const status = await new Promise<{ code: number; body: string }>((resolve, reject) => {
      const req = request(`${base}/${"a".repeat(20_000)}`, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ code: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(status.code).toBe(431);
    expect(JSON.parse(status.body)).toMatchObject({ error: "header_too_large" });
  });

  it("garbage: 400 with a JSON body; the server goes on serving", async () => {
    const answer = statusAndBody(await raw("NOT HTTP AT ALL\r\n\r\n"));
    expect(answer.statusLine).toBe("HTTP/1.1 400 Bad Request");
    expect(answer.body).toMatchObject({ error: "bad_request" });
    expect((await get("/shared/_probe", "ann:pw")).status).toBe(200);
  });
});
