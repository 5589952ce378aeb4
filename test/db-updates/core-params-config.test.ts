import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isLeft, isRight } from "fp-ts/lib/Either.js";
import { COUCHDB_DEFAULTS, decodeDbUpdatesConfig, decodeFeedParams, UPHOLSTER_DEFAULTS } from "../../src/core/db-updates/index.js";

const decode = (qs: string) => decodeFeedParams(new URLSearchParams(qs));

describe("feed parameters", () => {
  it("defaults as CouchDB", () => {
    expect(decode("")).toEqual({
      _tag: "Right",
      right: { feed: "normal", since: { kind: "seq", seq: "0" }, limit: undefined, descending: false, heartbeatMs: undefined, timeoutMs: 60_000 },
    });
  });

  it("CouchDB's 400 reasons (fixtures 83, 84, 85)", () => {
    expect(decode("limit=abc")).toEqual({ _tag: "Left", left: { error: "bad_request", reason: 'invalid_integer: limit must be a non-negative integer, got "abc"' } });
    expect(decode("feed=bogus")).toEqual({
      _tag: "Left",
      left: { error: "bad_request", reason: "Supported `feed` types: normal, continuous, longpoll, eventsource" },
    });
    expect(decode("since=bogus")).toEqual({
      _tag: "Left",
      left: { error: "bad_request", reason: "Malformed sequence supplied in 'since' parameter." },
    });
    expect(decode("timeout=-1")).toEqual({ _tag: "Left", left: { error: "bad_request", reason: 'invalid_integer: timeout must be a non-negative integer, got "-1"' } });
    expect(decode("heartbeat=1.5")).toEqual({ _tag: "Left", left: { error: "bad_request", reason: 'invalid_integer: heartbeat must be a non-negative integer, got "1.5"' } });
  });

  it("accepts CouchDB's seqs, now, heartbeat=true", () => {
    const r = decode("feed=continuous&since=373-g1AAAACbeJzLYWBg_-x&heartbeat=true&descending=true&limit=2");
    expect(isRight(r) && r.right).toMatchObject({
      feed: "continuous",
      since: { kind: "seq", seq: "373-g1AAAACbeJzLYWBg_-x" },
      heartbeatMs: 60_000,
      descending: true,
      limit: 2,
    });
    const now = decode("since=now");
    expect(isRight(now) && now.right.since).toEqual({ kind: "now" });
  });

  it("any non-negative integer decodes; anything else with a non-digit is invalid_integer", () => {
    fc.assert(
      fc.property(fc.nat(), (n) => {
        const r = decode(`limit=${n}&timeout=${n}`);
        expect(isRight(r) && r.right.limit).toBe(n);
      }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1 }).filter((s) => !/^\+?\d+$/.test(s)), (s) => {
        const r = decodeFeedParams(new URLSearchParams([["limit", s]]));
        expect(isLeft(r) && r.left.reason).toMatch(/^invalid_integer: limit must be a non-negative integer, got "/);
      }),
    );
  });
});

describe("[global_changes] config", () => {
  it("defaults: upholster's 25/25, CouchDB's 25/500 available for compatibility", () => {
    expect(decodeDbUpdatesConfig({})).toEqual({ config: UPHOLSTER_DEFAULTS, errors: [] });
    expect(COUCHDB_DEFAULTS.maxWriteDelayMs).toBe(500);
    expect(UPHOLSTER_DEFAULTS.dbName.startsWith("_")).toBe(false);
  });

  it("reads CouchDB keys and rejects bad values by name, keeping the rest", () => {
    const { config, errors } = decodeDbUpdatesConfig({
      global_changes: { max_event_delay: "10", max_write_delay: "soon", update_db: "false", db_name: "_global_changes" },
    });
    expect(config.maxEventDelayMs).toBe(10);
    expect(config.maxWriteDelayMs).toBe(UPHOLSTER_DEFAULTS.maxWriteDelayMs);
    expect(config.updateDb).toBe(false);
    expect(config.dbName).toBe("upholster_global_changes");
    expect(errors.map((e) => [e.key, e.value])).toEqual([
      ["max_write_delay", "soon"],
      ["db_name", "_global_changes"],
    ]);
  });
});
