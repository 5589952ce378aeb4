/**
 * Request bodies: each command route's own (right, and near misses: wrong
 * types, bad db names, missing dbs and design docs, odd ddoc ids), and
 * bodies that are not what they claim to be (not JSON, not UTF-8, too
 * large, nested deeper than any parser expects). Latin-1 strings: bytes.
 */
import fc from "fast-check";
import type { BodyKind } from "./routes.js";

/** Dbs the daemons have (`grown` on the memory store, `fx_db` in the recording), others, and names CouchDB refuses. */
const DB_NAMES = ["grown", "fx_db", "missing", "_users", "team/_users", "Bad", "1abc", "a b", "a/../b", "", "x".repeat(239), "a".repeat(238), "shards/00000000-7fffffff/fx_db.1795281095", "db$()+-/", "a?b", "a#b", "a%2fb"];
const DDOCS = ["v", "_design/v", "_design/", "", "_design/missing", "a/b", "_design/a?b#c", "%2F", "x".repeat(1_100), "\u00e9", "_design/_design/v", "..", "_local/x", " "];

const json = (value: fc.Arbitrary<unknown>): fc.Arbitrary<string> => value.map((v) => JSON.stringify(v));

const enqueue = json(
  fc.oneof(
    fc.record({ db: fc.constantFrom(...DB_NAMES) }),
    fc.record({ db: fc.constantFrom(...DB_NAMES), ddoc: fc.constantFrom(...DDOCS) }),
    fc.record({ db: fc.oneof(fc.string({ maxLength: 20 }), fc.jsonValue()), ddoc: fc.oneof(fc.string({ maxLength: 20 }), fc.jsonValue()) }, { requiredKeys: [] }),
  ),
);

const enqueueAll = json(fc.record({ scope: fc.oneof(fc.constantFrom("dbs", "views", "all", "", "DBS"), fc.jsonValue()) }, { requiredKeys: [] }));

const LOGINS = ["name=boss&password=s3cret", "name=boss&password=wrong", "name=boss&password", "name=&password=", "name=%zz&password=%", "password=s3cret"];
const login = fc.oneof(
  json(fc.record({ name: fc.oneof(fc.constantFrom("boss", "admin", ""), fc.jsonValue()), password: fc.oneof(fc.constantFrom("s3cret", "s3cr3t-pw", "wrong"), fc.jsonValue()) }, { requiredKeys: [] })),
  fc.constantFrom(...LOGINS),
);

const COMMANDS: Readonly<Record<BodyKind, fc.Arbitrary<string>>> = { enqueue, enqueue_all: enqueueAll, login };

export const strangeBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("", " ", "{", "{\"db\":", "null", "[]", "\"db\"", "{\"db\":\"grown\"}}", "\u00ff\u00fe{\u0000\"\u0000d\u0000", "\u00c3\u0028", "{\"__proto__\":{\"db\":\"grown\"}}", "{\"db\":\"grown\",\"db\":7}"),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string({ unit: "binary", maxLength: 200 }).map((s) => Buffer.from(s, "utf8").toString("latin1")),
  fc.integer({ min: 1_000, max: 25_000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth)),
  fc.integer({ min: 64 * 1024 - 12, max: 100_000 }).map((size) => `{"db":"${"a".repeat(size)}"}`),
);

/** The route's own body three times in four, else something strange. */
export const bodyFor = (kind: BodyKind | undefined): fc.Arbitrary<string | undefined> =>
  kind === undefined
    ? fc.option(strangeBody, { nil: undefined, freq: 2 })
    : fc.oneof({ weight: 3, arbitrary: COMMANDS[kind] }, { weight: 1, arbitrary: strangeBody });

/** Any route's body, or none. */
export const anyBody: fc.Arbitrary<string | undefined> = fc.option(
  fc.oneof({ weight: 3, arbitrary: fc.oneof(enqueue, enqueueAll, login) }, { weight: 2, arbitrary: strangeBody }),
  { nil: undefined, freq: 3 },
);
