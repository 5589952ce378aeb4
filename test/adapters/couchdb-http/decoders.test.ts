/**
 * Every recorded CouchDB 3.4.3 exchange is checked against the adapter's codecs:
 * each fixture is classified (which decoder reads it, or why the adapter never
 * reads it) and a new fixture without a classification fails this test.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type * as t from "io-ts";
import { isRight } from "fp-ts/lib/Either.js";
import {
  ActiveTasks,
  BulkDocsBody,
  ChangesBody,
  DbInfoBody,
  DbNames,
  DbsInfoBody,
  DbUpdatesBody,
  DbUpdatesLine,
  decodeBody,
  DesignDocsBody,
  DocWritten,
  ErrorBody,
  Membership,
  OkBody,
  RootInfo,
  Session,
  ViewInfoBody,
} from "../../../src/adapters/couchdb-http/decoders.js";
import { CouchDecodeError } from "../../../src/adapters/couchdb-http/errors.js";
import { toDbInfo, toViewIndexInfo, estimateActiveBytes } from "../../../src/adapters/couchdb-http/mapping.js";
import { seqNumber } from "../../../src/adapters/couchdb-http/seq.js";
import { decodeChanges, decodeDesignDocs } from "../../../src/adapters/couchdb-http/store.js";
import { backoffCeilingMs, backoffDelayMs } from "../../../src/adapters/couchdb-http/backoff.js";
import { redactText, redactUrl } from "../../../src/adapters/couchdb-http/redact.js";
import { exchange, loadExchanges, type Exchange } from "../../support/fixtures.js";

type Use = { codec: t.Decoder<unknown, unknown> } | { stream: "continuous" | "longpoll" } | { unused: string };

/** What the adapter does with each recorded exchange. */
const uses: Record<string, Use> = {
  "01": { codec: RootInfo },
  "02": { unused: "/_up health check: the adapter probes GET / instead" },
  "03": { codec: DbNames },
  "04": { codec: Membership },
  "05": { unused: "node name: shard mode uses /_membership names" },
  "06": { unused: "versions: not needed" },
  "07": { unused: "smoosh config of the server: upholster has its own" },
  "08": { unused: "ken config" },
  "09": { unused: "CouchDB's own smoosh status" },
  "10": { unused: "node VM stats" },
  "11": { codec: Session },
  "12": { codec: Session },
  "13": { codec: Session },
  "14": { codec: ActiveTasks },
  "18": { codec: OkBody },
  "19": { codec: OkBody },
  "20": { unused: "recorder set-up (config PUT)" },
  "21": { codec: DbInfoBody },
  "22": { codec: BulkDocsBody },
  "23": { codec: DbInfoBody },
  "24": { codec: DbInfoBody },
  "25": { codec: DbInfoBody },
  "26": { codec: DbInfoBody },
  "27": { codec: DbsInfoBody },
  "29": { unused: "HEAD: the adapter uses GET (it needs the body anyway)" },
  "31": { unused: "shard map: ranges only, shard names come from _all_dbs (32)" },
  "32": { codec: DbNames },
  "33": { codec: DbInfoBody },
  "34": { codec: DbInfoBody },
  "36": { codec: OkBody },
  "37": { codec: DbInfoBody },
  "38": { codec: ActiveTasks },
  "39": { codec: DbInfoBody },
  "40": { codec: DbInfoBody },
  "41": { codec: OkBody },
  "43": { unused: "view query (ken, a later issue)" },
  "44": { codec: ActiveTasks },
  "45": { codec: ViewInfoBody },
  "46": { codec: DbInfoBody },
  "47": { codec: OkBody },
  "48": { codec: ActiveTasks },
  "49": { codec: ViewInfoBody },
  "50": { codec: ActiveTasks },
  "51": { codec: ViewInfoBody },
  "52": { codec: ViewInfoBody },
  "53": { unused: "CouchDB's own smoosh status" },
  "54": { codec: ActiveTasks },
  "55": { codec: DocWritten },
  "56": { codec: ViewInfoBody },
  "57": { unused: "view query (ken)" },
  "58": { codec: ActiveTasks },
  "59": { codec: ViewInfoBody },
  "60": { unused: "view query (ken)" },
  "61": { codec: ViewInfoBody },
  "62": { codec: OkBody },
  "64": { codec: OkBody },
  "65": { codec: DocWritten },
  "66": { codec: ViewInfoBody },
  "67": { codec: ViewInfoBody },
  "68": { unused: "Mango index creation" },
  "69": { unused: "Mango index list" },
  "70": { codec: ViewInfoBody },
  "71": { codec: DesignDocsBody },
  "72": { codec: ChangesBody },
  "73": { stream: "longpoll" },
  "74": { codec: DbUpdatesBody },
  "75": { unused: "304 Not Modified: no body" },
  "76": { stream: "longpoll" },
  "77": { codec: DbUpdatesBody },
  "78": { stream: "continuous" },
  "79": { stream: "continuous" },
  "80": { unused: "eventsource feed is broken in 3.4.3 (500 inside a 200 stream): the adapter uses continuous" },
  "81": { unused: "eventsource replay emits raw _global_changes rows: not used" },
  "82": { codec: DbUpdatesBody },
  "95": { codec: OkBody },
};

const prefixOf = (e: Exchange): string => e.file.slice(0, 2);

describe("every recorded CouchDB 3.4.3 exchange", () => {
  const all = loadExchanges();

  it("is classified (the list covers all 96 files)", () => {
    expect(all.length).toBe(96);
    for (const e of all) {
      const isError = e.response.status >= 400;
      expect(isError || uses[prefixOf(e)] !== undefined, `${e.file} has no classification`).toBe(true);
    }
  });

  for (const e of all) {
    const use = uses[prefixOf(e)];
    if (e.response.status >= 400) {
      it(`${e.file}: error ${e.response.status} body decodes as {error, reason}`, () => {
        if (e.request.method === "HEAD") {
          expect(e.response.body).toBeNull();
          return;
        }
        const body = decodeBody(ErrorBody, e.response.body, `${e.request.method} ${e.request.path}`);
        expect(body.error.length).toBeGreaterThan(0);
      });
    } else if (use !== undefined && "codec" in use) {
      it(`${e.file}: ${e.request.method} ${e.request.path.slice(0, 50)} decodes`, () => {
        expect(isRight(use.codec.decode(e.response.body)), `${e.file}`).toBe(true);
      });
    } else if (use !== undefined && "stream" in use) {
      it(`${e.file}: every ${use.stream} line decodes`, () => {
        const text = e.response.body as string;
        if (use.stream === "continuous") {
          const rows = text.split("\n").filter((l) => l.trim() !== "");
          expect(rows.length).toBeGreaterThan(0);
          for (const row of rows) expect(isRight(DbUpdatesLine.decode(JSON.parse(row)))).toBe(true);
        } else {
          // longpoll bodies are one JSON document once the stream ends (rows separated by ",\r\n").
          const parsed = JSON.parse(text) as unknown;
          const ok = e.request.path.startsWith("/_db_updates") ? isRight(DbUpdatesBody.decode(parsed)) : isRight(ChangesBody.decode(parsed));
          expect(ok).toBe(true);
        }
      });
    } else {
      it(`${e.file}: not read by the adapter (${use?.unused ?? "?"})`, () => {
        expect(use !== undefined && "unused" in use).toBe(true);
      });
    }
  }
});

describe("mapping recorded bodies to the port's types", () => {
  it("clustered db info: sizes, opaque seq and its number, no compacted seq", () => {
    const body = decodeBody(DbInfoBody, exchange("24").response.body, "GET /fx_db");
    const info = toDbInfo("fx_db", body, undefined, "GET /fx_db");
    expect(info).toMatchObject({ fileBytes: 8364454, activeBytes: 1865526, updateSeqNumber: 18000, docCount: 3000, compactionRunning: false, needsUpgrade: false, diskFormatVersion: 8 });
    expect(info.updateSeq.startsWith("18000-g1AAAA")).toBe(true);
    expect(info.compactedSeqNumber).toBeUndefined();
    expect(toDbInfo("fx_db", body, 12000, "GET /fx_db").compactedSeqNumber).toBe(12000);
  });

  it("a db info with no size at all (PouchDB Server, for a moment) reads as 0 bytes: priority 0, never a start on a guess", () => {
    const body = decodeBody(DbInfoBody, { db_name: "grow", update_seq: 12, doc_count: 3 }, "GET /grow");
    expect(toDbInfo("grow", body, undefined, "GET /grow")).toMatchObject({ fileBytes: 0, activeBytes: 0, updateSeqNumber: 12 });
  });

  it("shard info: integer seqs and compacted_seq; two shards sum to the clustered numbers", () => {
    const a = toDbInfo("s1", decodeBody(DbInfoBody, exchange("33").response.body, "x"), 999, "x");
    const b = toDbInfo("s2", decodeBody(DbInfoBody, exchange("34").response.body, "x"), undefined, "x");
    const clustered = toDbInfo("fx_db", decodeBody(DbInfoBody, exchange("25").response.body, "x"), undefined, "x");
    expect(a.compactedSeqNumber).toBe(0); // the shard's own compacted_seq wins over the kept one
    expect(a.updateSeqNumber + b.updateSeqNumber).toBe(clustered.updateSeqNumber);
    expect(a.fileBytes + b.fileBytes).toBe(clustered.fileBytes);
    const after = toDbInfo("s1", decodeBody(DbInfoBody, exchange("40").response.body, "x"), undefined, "x");
    expect(after.compactedSeqNumber).toBe(after.updateSeqNumber);
  });

  it("compact_running during compaction (37)", () => {
    expect(toDbInfo("fx_db", decodeBody(DbInfoBody, exchange("37").response.body, "x"), undefined, "x").compactionRunning).toBe(true);
  });

  it("_dbs_info: per-key not_found in a 200", () => {
    const entries = decodeBody(DbsInfoBody, exchange("27").response.body, "POST /_dbs_info");
    expect(entries.map((e) => ("info" in e ? e.key : `!${e.key}:${e.error}`))).toEqual(["fx_db", "fx_q1", "!fx_missing:not_found"]);
  });

  it("view _info fields (45 building, 51 compacting, 52 after)", () => {
    const v = (p: string) => {
      const body = decodeBody(ViewInfoBody, exchange(p).response.body, "x");
      if (typeof body.view_index === "string") throw new Error("string");
      return toViewIndexInfo("fx_big", "_design/big", body.view_index);
    };
    expect(v("45")).toMatchObject({ updaterRunning: true, compactionRunning: false });
    expect(v("51").compactionRunning).toBe(true);
    const after = v("52");
    expect(after).toMatchObject({ fileBytes: 893264, activeBytes: 889479, updateSeqNumber: 168001, signature: "a8166b9c05e664a528cd2d61a19cf963", needsUpgrade: false });
    expect(v("49").fileBytes).toBeGreaterThan(after.fileBytes);
  });

  it("active task types: database_compaction, view_compaction (design_document), indexer", () => {
    const types = (p: string) => decodeBody(ActiveTasks, exchange(p).response.body, "x").map((task) => task.type);
    expect(types("48")).toEqual(["database_compaction", "database_compaction"]);
    expect(types("50")).toEqual(["view_compaction", "view_compaction"]);
    expect(types("44").every((x) => x === "indexer")).toBe(true);
    expect(decodeBody(ActiveTasks, exchange("50").response.body, "x")[0]?.design_document).toBe("_design/big");
  });

  it("design docs with bodies (71), including a Mango ddoc", () => {
    const { ddocs, docCount } = decodeDesignDocs(exchange("71").response.body, "x");
    expect(docCount).toBe((exchange("71").response.body as { total_rows: number }).total_rows);
    expect(ddocs.map((d) => d.id)).toEqual(["_design/d", "_design/mango-idx", "_design/noauto"]);
    expect(ddocs[1]?.body.language).toBe("query");
    expect(ddocs[0]?.rev).toBe("1-8c759e1987ebe944ee4a1243b905fada");
    expect(ddocs[0]?.body._id).toBeUndefined();
  });

  it("_changes?filter=_design (72): rows, opaque seqs, last_seq", () => {
    const page = decodeChanges(exchange("72").response.body, "x");
    expect(page.results.map((r) => r.id)).toEqual(["_design/d", "_design/noauto", "_design/mango-idx"]);
    expect(seqNumber(page.lastSeq)).toBe(19503);
  });

  it("db_updates normal feed rows and last_seq (74, 82)", () => {
    const body = decodeBody(DbUpdatesBody, exchange("82").response.body, "x");
    expect(body.results.length).toBe(2);
    expect(body.last_seq).toBe(body.results[1]?.seq);
  });

  it("an unexpected shape names the endpoint and the field, with the value", () => {
    const bad = { ...(exchange("24").response.body as object), sizes: { file: "big", active: 1 } };
    let caught: unknown;
    try {
      decodeBody(DbInfoBody, bad, "GET /fx_db");
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CouchDecodeError);
    expect((caught as Error).message).toContain("GET /fx_db");
    expect((caught as Error).message).toContain("sizes.file");
    expect((caught as Error).message).toContain('"big"');
    expect(() => toDbInfo("x", { db_name: "x", update_seq: "abc" }, undefined, "GET /x")).toThrow(/GET \/x: .*update_seq/);
  });
});

describe("rules (properties)", () => {
  it("seqNumber reads the N of N-<opaque> and plain integers", () => {
    fc.assert(
      fc.property(fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.string({ unit: fc.constantFrom(..."abcXYZ019_-") }), (n, opaque) => {
        expect(seqNumber(`${n}-${opaque}`)).toBe(n);
        expect(seqNumber(n)).toBe(n);
        expect(seqNumber(String(n))).toBe(n);
      }),
    );
    expect(seqNumber("now")).toBeUndefined();
    expect(seqNumber(-1)).toBeUndefined();
  });

  it("back-off: 0 <= delay < ceiling <= cap, ceiling doubles until the cap", () => {
    fc.assert(
      fc.property(fc.nat({ max: 60 }), fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 1_000_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (attempt, baseMs, capMs, r) => {
        const policy = { baseMs, capMs };
        const ceiling = backoffCeilingMs(attempt, policy);
        expect(ceiling).toBeLessThanOrEqual(capMs);
        expect(ceiling).toBe(Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30)));
        const d = backoffDelayMs(attempt, policy, () => r);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(Math.max(ceiling, 1));
        expect(backoffCeilingMs(attempt + 1, policy)).toBeGreaterThanOrEqual(ceiling);
      }),
    );
  });

  it("redaction removes userinfo, passwords and session cookies from any text", () => {
    const safe = fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789"), minLength: 3, maxLength: 20 });
    fc.assert(
      fc.property(safe, safe, fc.string(), (user, pass, noise) => {
        const url = `http://${user}:${pass}@127.0.0.1:5984/prefix`;
        expect(redactUrl(url)).toBe("http://127.0.0.1:5984/prefix");
        const text = `${noise} GET ${url} failed; cookie AuthSession=${pass}; ${noise}`;
        expect(redactText(text, [pass])).not.toContain(pass);
      }),
    );
  });

  it("the PouchDB Server active-size estimate stays within [0, file] and falls to file after a compaction", () => {
    fc.assert(
      fc.property(fc.nat({ max: 1e9 }), fc.nat({ max: 1e6 }), fc.nat({ max: 1e7 }), (file, docs, seq) => {
        const never = estimateActiveBytes(file, docs, seq, undefined);
        expect(never).toBeGreaterThanOrEqual(0);
        expect(never).toBeLessThanOrEqual(file);
        expect(estimateActiveBytes(file, docs, seq, seq)).toBe(file); // nothing written since the compaction
      }),
    );
  });
});
