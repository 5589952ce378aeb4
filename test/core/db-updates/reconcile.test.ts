import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  adoptsSilently,
  decidePage,
  freshPass,
  nextPage,
  pageCovered,
  pageDone,
  passFromJson,
  passToJson,
  PersistedPass,
  requestPass,
  seqMarkOf,
  type KnownDb,
  type PassState,
  type SeqMark,
} from "../../../src/core/db-updates/index.js";
import { isRight } from "fp-ts/lib/Either.js";

const decide = (known: Record<string, KnownDb>, server: Record<string, SeqMark>, adopt = false, room = 100) =>
  decidePage({ known: new Map(Object.entries(known)), server: new Map(Object.entries(server)), adopt: () => adopt, room });

describe("seq marks", () => {
  it("keep the numeric prefix of clustered seqs, plain numbers as they are, anything else whole", () => {
    expect(seqMarkOf("379-g1AAAACbeJzLYWBgYMpgTmEQTM4")).toBe(379);
    expect(seqMarkOf("12")).toBe(12);
    expect(seqMarkOf(7)).toBe(7);
    expect(seqMarkOf("abc")).toBe("abc");
    expect(seqMarkOf("99999999999999999999-x")).toBe("99999999999999999999-x");
  });
});

describe("decidePage: the rules", () => {
  it("an unknown db on the server was created (and updated when it was written)", () => {
    expect(decide({}, { a: 0, b: 3 }).events).toEqual([
      { type: "created", db: "a" },
      { type: "created", db: "b" },
      { type: "updated", db: "b" },
    ]);
  });

  it("a known db missing from the server was deleted; a known db whose seq moved was updated; an unmoved one is left alone", () => {
    const d = decide({ gone: { seq: 4 }, moved: { seq: 4 }, same: { seq: 4 } }, { moved: 5, same: 4 });
    expect(d.events).toEqual([
      { type: "deleted", db: "gone" },
      { type: "updated", db: "moved" },
    ]);
    expect(d.record).toEqual([["moved", 5]]);
  });

  it("a seq that went down (re-created and written) is a change too", () => {
    expect(decide({ a: { seq: 9 } }, { a: 2 }).events).toEqual([{ type: "updated", db: "a" }]);
  });

  it("uncertain dbs are stated again, whatever the knowledge says", () => {
    expect(decide({ a: { seq: 3, uncertain: true }, b: { uncertain: true } }, { a: 3 }).events).toEqual([
      { type: "created", db: "a" },
      { type: "updated", db: "a" },
      { type: "deleted", db: "b" },
    ]);
  });

  it("a baseline records unknown dbs without events; known ones are still reconciled", () => {
    const d = decide({ k: { seq: 1 } }, { k: 2, new: 5 }, true);
    expect(d.events).toEqual([{ type: "updated", db: "k" }]);
    expect(d.record).toEqual([
      ["k", 2],
      ["new", 5],
    ]);
  });

  it("without room, unknown dbs are untracked, not announced on every pass", () => {
    const d = decide({}, { a: 0, b: 0 }, false, 1);
    expect(d.events).toEqual([{ type: "created", db: "a" }]);
    expect(d.untracked).toEqual(["b"]);
  });

  it("the blind spot (documented): a db re-created and written back to the same seq number looks unchanged", () => {
    expect(decide({ a: { seq: 2 } }, { a: 2 }).events).toEqual([]);
  });
});

describe("the walk (pass state)", () => {
  const names = fc.uniqueArray(fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h", "i", "j"), { maxLength: 10 }).map((n) => n.sort());

  /** Runs a pass to its end over a fixed list; returns the names covered, in order. */
  const walk = (list: readonly string[], state: PassState, pageSize: number): string[] => {
    const covered: string[] = [];
    let s = state;
    for (let guard = 0; s.active && guard < 100; guard++) {
      const q = nextPage(s, pageSize)!;
      const page = list.filter((n) => q.after === undefined || n > q.after).slice(0, q.limit);
      covered.push(...page);
      s = pageDone(s, pageCovered(q, page));
    }
    expect(s.active).toBe(false);
    return covered;
  };

  it("a pass asked for from any cursor covers every db at least once, whatever the page size", () => {
    fc.assert(
      fc.property(names, fc.option(fc.constantFrom("a", "c", "e", "z"), { nil: undefined }), fc.integer({ min: 1, max: 4 }), fc.boolean(), (list, cursor, pageSize, wrapped) => {
        const state = requestPass({ ...freshPass(), cursor, wrapped, baselineThrough: undefined });
        const covered = new Set(walk(list, state, pageSize));
        expect([...covered].sort()).toEqual(list);
      }),
    );
  });

  it("asking again mid-pass extends it to one full round from the cursor", () => {
    const list = ["a", "b", "c", "d", "e"];
    let s = requestPass({ ...freshPass(), baselineThrough: undefined });
    const q = nextPage(s, 2)!;
    s = pageDone(s, pageCovered(q, ["a", "b"]));
    s = requestPass(s);
    expect(walk(list, s, 2)).toEqual(["c", "d", "e", "a", "b"]);
  });

  it("a request while a page is read: the walk moves on, and that page's range is read again last", () => {
    const list = ["a", "b", "c", "d", "e"];
    let s = requestPass({ ...freshPass(), baselineThrough: undefined });
    s = pageDone(s, pageCovered(nextPage(s, 2)!, ["a", "b"]));
    s = requestPass(s); // arrives while the next page, c and d, is being read
    s = pageDone(s, pageCovered(nextPage(s, 2)!, ["c", "d"]), true);
    expect(walk(list, s, 2)).toEqual(["e", "a", "b", "c", "d"]);
    // At the end of the list, it goes round again from the first db.
    let t = requestPass({ ...freshPass(), baselineThrough: undefined });
    t = pageDone(t, pageCovered(nextPage(t, 9)!, list), true);
    expect(walk(list, t, 9)).toEqual(list);
  });

  it("the baseline covers only what no pass has covered yet, and survives being persisted", () => {
    let s = requestPass(freshPass());
    expect(adoptsSilently(s, "a")).toBe(true);
    s = pageDone(s, pageCovered(nextPage(s, 2)!, ["a", "b"]));
    const decoded = PersistedPass.decode(JSON.parse(JSON.stringify(passToJson(s))));
    expect(isRight(decoded)).toBe(true);
    if (isRight(decoded)) s = passFromJson(decoded.right);
    s = requestPass(s);
    expect(adoptsSilently(s, "b")).toBe(false);
    expect(adoptsSilently(s, "c")).toBe(true);
    s = pageDone(s, pageCovered(nextPage(s, 2)!, ["c"]));
    expect(adoptsSilently(s, "z")).toBe(false);
  });
});
