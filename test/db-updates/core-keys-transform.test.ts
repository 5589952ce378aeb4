import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isLeft, isRight } from "fp-ts/lib/Either.js";
import { COUCHDB_DB_NAME, encodeKey, EVENT_TYPES, parseKey, toRow, type EventKey } from "../../src/core/db-updates/index.js";

/** Valid CouchDB db names: `^[a-z][a-z0-9_$()+/-]*$`, plus system names. */
const couchDbName = fc
  .tuple(
    fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz".split("")),
    fc.array(fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789_$()+/-".split("")), { maxLength: 30 }),
  )
  .map(([first, rest]) => first + rest.join(""));
const systemDbName = fc.constantFrom("_users", "_replicator", "_dbs", "_nodes", "_global_changes");
/** Any non-empty string: other stores (PouchDB) allow `:`, `~`, unicode... */
const anyDbName = fc.string({ minLength: 1, maxLength: 30, unit: "grapheme" });
const account = fc.string({ minLength: 1, maxLength: 20, unit: "grapheme" });
const eventType = fc.constantFrom(...EVENT_TYPES);

describe("event keys", () => {
  it("valid CouchDB names give CouchDB's own key `<type>:<dbname>`", () => {
    fc.assert(
      fc.property(eventType, fc.oneof(couchDbName, systemDbName), (type, db) => {
        expect(COUCHDB_DB_NAME.test(db) || db.startsWith("_")).toBe(true);
        expect(encodeKey({ type, db })).toBe(`${type}:${db}`);
      }),
    );
  });

  it("round-trips exactly for every db name, with or without an account", () => {
    fc.assert(
      fc.property(eventType, fc.oneof(couchDbName, systemDbName, anyDbName), fc.option(account, { nil: undefined }), (type, db, acc) => {
        const key: EventKey = acc === undefined ? { type, db } : { type, db, account: acc };
        const parsed = parseKey(encodeKey(key));
        expect(isRight(parsed)).toBe(true);
        if (isRight(parsed)) expect(parsed.right).toEqual(key);
      }),
    );
  });

  it("different keys never encode to the same id (no ambiguity between `a/b` and account a + db b)", () => {
    fc.assert(
      fc.property(eventType, anyDbName, fc.option(account, { nil: undefined }), anyDbName, fc.option(account, { nil: undefined }), (type, db1, a1, db2, a2) => {
        fc.pre(db1 !== db2 || a1 !== a2);
        expect(encodeKey({ type, db: db1, account: a1 })).not.toBe(encodeKey({ type, db: db2, account: a2 }));
      }),
    );
    expect(encodeKey({ type: "created", db: "team/db" })).not.toBe(encodeKey({ type: "created", db: "db", account: "team" }));
  });

  it("rejects ids that are not event keys, naming the id", () => {
    for (const id of ["nocolon", "bogus:db", "created:", "created:~acc", "created:~%E0%A4%A/db", "created:~acc/"]) {
      const parsed = parseKey(id);
      expect(isLeft(parsed)).toBe(true);
      if (isLeft(parsed)) expect(parsed.left).toContain(JSON.stringify(id));
    }
  });
});

describe("row transform", () => {
  it("admins see CouchDB 3.4's {db_name,type,seq}, plus account when the key has one", () => {
    expect(toRow("created:fx_dbu_a", "372-x", { kind: "admin" })).toEqual({ db_name: "fx_dbu_a", type: "created", seq: "372-x" });
    expect(JSON.stringify(toRow(encodeKey({ type: "updated", db: "d", account: "acme" }), "5", { kind: "admin" }))).toBe(
      '{"db_name":"d","type":"updated","account":"acme","seq":"5"}',
    );
    expect(toRow("junk", "1", { kind: "admin" })).toBeUndefined();
  });

  it("never shows a non-admin another account's db (or an account-less one)", () => {
    fc.assert(
      fc.property(eventType, anyDbName, fc.option(account, { nil: undefined }), account, fc.string(), (type, db, owner, viewer, seq) => {
        const row = toRow(encodeKey({ type, db, account: owner }), seq, { kind: "owner", account: viewer });
        if (owner === viewer) {
          expect(row).toEqual({ db_name: db, type, seq });
        } else {
          expect(row).toBeUndefined();
        }
      }),
    );
  });
});
