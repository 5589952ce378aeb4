/**
 * A CouchDB 3.4.3 for the fuzzer to stand behind upholster: a loopback
 * replay server answering every request the daemon makes with a recorded
 * exchange (test/fixtures/couchdb-3.4.3), so nothing the fuzzer sees can be
 * blamed on a CouchDB that is down. What the recording has for another db or
 * another query (the feed db's info, its `_changes`, `_all_dbs` with paging)
 * is that exchange with the name replaced: the shapes stay CouchDB's own.
 *
 * Who is who for `GET /_session` (upholster asks it for every protected
 * request): the admin's Basic credentials get the admin's session (11),
 * no credentials or a well-formed unknown cookie the anonymous one (12),
 * other Basic credentials CouchDB's 401 "Name or password is incorrect."
 * (16); unreadable ones CouchDB's 400 (see `session`).
 */
import { exchange } from "../../support/fixtures.js";
import { ReplayServer, replyOf, type RecordedRequest, type Reply } from "../../support/replay-server.js";

export const COUCH_ADMIN = { name: "admin", password: "s3cr3t-pw" };

/** The feed db upholster keeps its `/_db_updates` rows in (`[global_changes] db_name`'s default). */
const FEED_DB = "upholster_global_changes";
/** The one user db the recording knows; every other db is CouchDB's 404 (28). */
export const KNOWN_DB = "fx_db";

const basicOf = (name: string, password: string): string => `Basic ${Buffer.from(`${name}:${password}`).toString("base64")}`;

const body = (prefix: string): unknown => exchange(prefix).response.body;

/** A recorded db info (fixture 21: fresh, 16 KB, below every channel's min_size) under another name. */
const dbInfoNamed = (db: string): Reply => ({ status: 200, body: { ...(body("21") as object), db_name: db } });

/** Fixture 73's `_changes` with no rows: the feed db never has any (upholster writes nothing here). */
const emptyChanges = (): Reply => ({ status: 200, body: JSON.parse(body("73") as string) as unknown });

/** `POST /_dbs_info`: fixture 27's entry for the dbs it knows, its `not_found` entry for the others. */
const dbsInfo = (req: RecordedRequest): Reply => {
  const known = body("27") as Array<{ key: string }>;
  const keys = (JSON.parse(req.body) as { keys: string[] }).keys;
  return { status: 200, body: keys.map((key) => known.find((entry) => entry.key === key) ?? { key, error: "not_found" }) };
};

/**
 * Not recorded, but CouchDB 3.4's code: `couch_httpd_auth` answers 400 to a
 * Basic header whose value is not base64 (`basic_name_pw/1`) and to an
 * `AuthSession` cookie that does not split into `name:time:hash`
 * (`cookie_authentication_handler/2`, asked first); other schemes, and a
 * Basic value without a colon, are anonymous.
 */
const INVALID_BASE64 = { status: 400, body: { error: "bad_request", reason: "Authorization header has invalid base64 value" } };
const MALFORMED_COOKIE = { status: 400, body: { error: "bad_request", reason: "Malformed AuthSession cookie. Please clear your cookies." } };

const authSessionOf = (cookie: string | undefined): string | undefined =>
  cookie?.split(";").map((part) => part.trim()).find((part) => part.startsWith("AuthSession="))?.slice("AuthSession=".length);

const isBase64 = (text: string): boolean => /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0;

const session = (req: RecordedRequest): Reply => {
  const cookie = authSessionOf(req.headers.cookie);
  if (cookie !== undefined && cookie !== "" && Buffer.from(cookie, "base64url").toString("latin1").split(":").length < 3) return MALFORMED_COOKIE;
  const authorization = req.headers.authorization;
  if (authorization === basicOf(COUCH_ADMIN.name, COUCH_ADMIN.password)) return replyOf(exchange("11"));
  const basic = /^Basic (.*)$/s.exec(authorization ?? "");
  if (basic === null) return replyOf(exchange("12"));
  if (!isBase64(basic[1] ?? "")) return INVALID_BASE64;
  if (!Buffer.from(basic[1] ?? "", "base64").toString("latin1").includes(":")) return replyOf(exchange("12"));
  return replyOf(exchange("16"));
};

const pathOnly = (path: string): string => path.split("?")[0] ?? path;

/** Starts the replay server; returns it with its URL (no credentials: upholster's own are added by the caller). */
export async function startReplayedCouchDb(): Promise<{ readonly server: ReplayServer; readonly url: string }> {
  // Later routes go in front: the catch-alls first, then what is known.
  const server = new ReplayServer()
    .route("GET", (p) => /^\/[^/?]+$/.test(p), replyOf(exchange("28")))
    .route("GET", (p) => /^\/[^/]+\/_design\/[^/]+\/_info$/.test(p), replyOf(exchange("87")))
    .use(exchange("01"))
    .use(exchange("02"))
    .route("GET", (p) => pathOnly(p) === "/_all_dbs", replyOf(exchange("03")))
    .route("POST", "/_dbs_info", dbsInfo)
    .route("GET", "/_session", session)
    .route("PUT", `/${FEED_DB}`, replyOf(exchange("90")))
    .route("GET", `/${FEED_DB}`, dbInfoNamed(FEED_DB))
    .route("GET", (p) => pathOnly(p) === `/${FEED_DB}/_changes`, emptyChanges)
    .route("GET", `/${KNOWN_DB}`, dbInfoNamed(KNOWN_DB));
  return { server, url: await server.start() };
}
