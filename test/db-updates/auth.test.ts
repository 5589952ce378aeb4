import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createServer } from "node:http";
import {
  createCouchDbAuthenticator,
  createLocalAuthenticator,
  createSessionHandler,
  formatPasswordHash,
  hashPassword,
  makeSessionCookie,
  parsePasswordHash,
  verifyPassword,
  verifySessionCookie,
  type PasswordHash,
} from "../../src/http/auth/index.js";
import { VirtualScheduler } from "../../src/runtime/scheduler.js";
import { basicAuth, serve } from "./helpers.js";
import type { IncomingMessage } from "node:http";

const asHash = (s: string): PasswordHash => {
  const p = parsePasswordHash(s);
  if (p === "plain" || "error" in p) throw new Error(`not a hash: ${s}`);
  return p;
};
const fakeReq = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe("CouchDB password formats", () => {
  it("verifies pbkdf2-sha1 (CouchDB 3.3: RFC 6070 vectors), pbkdf2:sha256 (CouchDB 3.4) and -hashed-", async () => {
    const sha1 = asHash("-pbkdf2-0c60c80f961f0e71f3a9b524af6012062fe037a6,salt,1");
    expect(await verifyPassword(sha1, "password")).toBe(true);
    expect(await verifyPassword(sha1, "passwore")).toBe(false);
    expect(await verifyPassword(asHash("-pbkdf2-4b007901b765489abead49d926f721d065a429c1,salt,4096"), "password")).toBe(true);
    const sha256 = asHash("-pbkdf2:sha256-120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b,salt,1");
    expect(await verifyPassword(sha256, "password")).toBe(true);
    // -hashed-: sha1(password + salt)
    const simple = asHash("-hashed-c05344161c34c6606402148288f1c554ae669c59,x");
    expect(await verifyPassword(simple, "pass")).toBe(true);
    expect(await verifyPassword(simple, "pasS")).toBe(false);
    expect(parsePasswordHash("-pbkdf2-zz,salt,1")).toEqual({ error: expect.stringContaining("malformed") });
    expect(parsePasswordHash("-pbkdf2:md5-00,salt,1")).toEqual({ error: expect.stringContaining("md5") });
    expect(parsePasswordHash("hunter2")).toBe("plain");
  });

  it("hashing a plain password round-trips through CouchDB 3.4's text format", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }), async (pw, other) => {
        const text = formatPasswordHash(await hashPassword(pw, 2));
        expect(text).toMatch(/^-pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},2$/);
        const parsed = asHash(text);
        expect(await verifyPassword(parsed, pw)).toBe(true);
        if (other !== pw) expect(await verifyPassword(parsed, other)).toBe(false);
      }),
      { numRuns: 30 },
    );
  });
});

describe("session cookies", () => {
  it("verify only with the right secret and salt, and expire after the timeout", () => {
    const cookie = makeSessionCookie("admin", "salt1", "secret", 1_000);
    const salt = (n: string) => (n === "admin" ? "salt1" : undefined);
    expect(verifySessionCookie(cookie, salt, "secret", 1_100, 600)).toEqual({ name: "admin", issuedAtSeconds: 1_000 });
    expect(verifySessionCookie(cookie, salt, "other", 1_100, 600)).toBeUndefined();
    expect(verifySessionCookie(cookie, () => "salt2", "secret", 1_100, 600)).toBeUndefined();
    expect(verifySessionCookie(cookie, salt, "secret", 1_600, 600)).toBeUndefined();
    expect(verifySessionCookie("garbage", salt, "secret", 1_100, 600)).toBeUndefined();
  });

  it("the local authenticator: [admins] plain and pbkdf2, Basic and cookies on a virtual clock", async () => {
    const clock = new VirtualScheduler({ startMs: 1_000_000 });
    const auth = await createLocalAuthenticator({
      clock,
      config: {
        admins: { admin: "s3cret", old: "-pbkdf2-0c60c80f961f0e71f3a9b524af6012062fe037a6,salt,1", broken: "-pbkdf2-nothex" },
        chttpd_auth: { iterations: "10", timeout: "60", secret: "fixed" },
      },
    });
    expect([...auth.hashes().keys()]).toEqual(["admin", "old"]);
    expect(auth.hasAdmins()).toBe(true);
    expect((await createLocalAuthenticator({ clock, config: {} })).hasAdmins()).toBe(false);
    expect(auth.hashes().get("admin")).toMatch(/^-pbkdf2:sha256-/);
    expect(await auth.authenticate(fakeReq({ authorization: basicAuth("old", "password") }))).toMatchObject({ name: "old", roles: ["_admin"] });
    expect(await auth.authenticate(fakeReq({ authorization: basicAuth("admin", "wrong") }))).toBe("bad-credentials");
    expect(await auth.authenticate(fakeReq({ authorization: basicAuth("nobody", "x") }))).toBe("bad-credentials");
    expect(await auth.authenticate(fakeReq({}))).toBeNull();
    const cookie = `AuthSession=${auth.issueCookie("admin")}`;
    expect(await auth.authenticate(fakeReq({ cookie }))).toMatchObject({ name: "admin", authenticated: "cookie" });
    clock.advanceBy(61_000);
    expect(await auth.authenticate(fakeReq({ cookie }))).toBeNull();
  });
});

describe("asking CouchDB's /_session", () => {
  it("forwards the client's credentials, maps _admin, bad credentials and anonymous; caches answers", async () => {
    // The authority is a real HTTP server speaking CouchDB's /_session protocol: upholster's own.
    const clock = new VirtualScheduler({ startMs: 1_000_000 });
    const local = await createLocalAuthenticator({ clock, config: { admins: { boss: "pw" }, chttpd_auth: { iterations: "10" } } });
    let calls = 0;
    const sessionRoute = createSessionHandler(local, clock);
    const authority = await serve([
      async (req, res, url) => {
        calls++;
        return sessionRoute(req, res, url);
      },
    ]);
    try {
      const couch = createCouchDbAuthenticator({ couchdbUrl: authority.url, clock, cacheMs: 5_000 });
      // CouchDB 3 always has an admin: a server behind it is never open.
      expect(couch.hasAdmins()).toBe(true);
      expect(await couch.authenticate(fakeReq({ authorization: basicAuth("boss", "pw") }))).toMatchObject({ name: "boss", roles: ["_admin"] });
      expect(await couch.authenticate(fakeReq({ authorization: basicAuth("boss", "pw") }))).toMatchObject({ name: "boss" });
      expect(calls).toBe(1);
      clock.advanceBy(5_001);
      await couch.authenticate(fakeReq({ authorization: basicAuth("boss", "pw") }));
      expect(calls).toBe(2);
      expect(await couch.authenticate(fakeReq({ authorization: basicAuth("boss", "nope") }))).toBe("bad-credentials");
      expect(await couch.authenticate(fakeReq({ cookie: "AuthSession=forged" }))).toBeNull();
      expect(await couch.authenticate(fakeReq({}))).toBeNull();
      const cookie = `AuthSession=${local.issueCookie("boss")}`;
      expect(await couch.authenticate(fakeReq({ cookie }))).toMatchObject({ name: "boss", authenticated: "cookie" });
    } finally {
      await authority.close();
    }
  });

  it("keeps the path prefix of a CouchDB behind one (https://host/couch/_session)", async () => {
    const paths: string[] = [];
    const prefixed = createServer((req, res) => {
      paths.push(req.url ?? "");
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"ok":true,"userCtx":{"name":"boss","roles":["_admin"]}}');
    });
    await new Promise<void>((r) => prefixed.listen(0, "127.0.0.1", r));
    const port = (prefixed.address() as { port: number }).port;
    try {
      const couch = createCouchDbAuthenticator({ couchdbUrl: `http://127.0.0.1:${port}/couch`, clock: new VirtualScheduler() });
      expect(await couch.authenticate(fakeReq({ authorization: basicAuth("boss", "pw") }))).toMatchObject({ name: "boss" });
      expect(paths).toEqual(["/couch/_session"]);
    } finally {
      await new Promise<void>((r) => prefixed.close(() => r()));
    }
  });

  it("rejects (never crashes) when CouchDB answers garbage", async () => {
    const garbage = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"userCtx":{"name":42}}');
    });
    await new Promise<void>((r) => garbage.listen(0, "127.0.0.1", r));
    const port = (garbage.address() as { port: number }).port;
    const couch = createCouchDbAuthenticator({ couchdbUrl: `http://127.0.0.1:${port}`, clock: new VirtualScheduler() });
    await expect(couch.authenticate(fakeReq({ authorization: basicAuth("a", "b") }))).rejects.toThrow(/unexpected body/);
    await new Promise<void>((r) => garbage.close(() => r()));
  });
});
