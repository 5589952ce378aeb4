/**
 * Typos that would pass silently: unknown keys and sections are warned about
 * once each, with the nearest known name; CouchDB's own sections are quiet.
 * The known keys come from the decoders themselves.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decodeConfig } from "../../src/config/load.js";
import { createKnownSections, KNOWN_SECTIONS } from "../../src/config/known-sections.js";
import { keysReadBy } from "../../src/config/keys-read.js";
import { editDistance, nearestKey } from "../../src/config/nearest-key.js";
import { formatConfigWarning, unknownKeyWarnings } from "../../src/config/unknown-keys.js";
import { readValue, NonNegIntFromString, type IniSections } from "../../src/core/shared/ini.js";

const warningsOf = (ini: IniSections): string[] => {
  const decoded = decodeConfig(ini);
  if (decoded._tag === "Left") throw new Error(`did not decode: ${JSON.stringify(decoded.left)}`);
  return decoded.right.warnings.map(formatConfigWarning);
};

const keysOf = (section: string): string[] => {
  const keys = KNOWN_SECTIONS.keysOf(section);
  if (keys === undefined || keys === "any") throw new Error(`[${section}] has no key list`);
  return [...keys];
};

describe("unknown keys and sections", () => {
  it("the issue's typos: one warning each, naming it and the nearest known key", () => {
    expect(warningsOf({ smoosh: { wait_sec: "5" }, "smoosh.ratio_dbs": { min_prio: "3.0" }, frobnicate: { x: "1" } })).toEqual([
      "[smoosh] wait_sec: unknown key (did you mean wait_secs?); it is ignored",
      "[smoosh.ratio_dbs] min_prio: unknown key (did you mean min_priority?); it is ignored",
      "[frobnicate]: unknown section; it is ignored",
    ]);
  });

  it("a misspelt section or channel section is named with the nearest one", () => {
    expect(warningsOf({ smosh: { wait_secs: "5" } })).toEqual(["[smosh]: unknown section (did you mean [smoosh]?); it is ignored"]);
    expect(warningsOf({ "smoosh.ratio_db": { concurrency: "2" } })).toEqual([
      '[smoosh.ratio_db]: no channel list (db_channels, view_channels, cleanup_channels) names "ratio_db" (did you mean [smoosh.ratio_dbs]?); it is ignored',
    ]);
    expect(warningsOf({ global_changes: { max_write_dely: "5" }, couchdb: { ur1: "x" } })).toEqual([
      "[global_changes] max_write_dely: unknown key (did you mean max_write_delay?); it is ignored",
      "[couchdb] ur1: unknown key (did you mean url?); it is ignored",
    ]);
  });

  it("CouchDB's own sections and keys are known and quiet; [admins] and [smoosh.ignore] take any key", () => {
    const couchLocalIni: IniSections = {
      couchdb: { uuid: "abc", database_dir: "./data", single_node: "true" },
      chttpd: { port: "5984", bind_address: "0.0.0.0" },
      chttpd_auth: { secret: "s", timeout: "600", iterations: "10" },
      log: { level: "info" },
      smoosh: { compaction_log_level: "debug" },
      global_changes: { allowed_owner: "x" },
      ken: { batch_channels: "20" },
      "ken.ignore": { somedb: "true" },
      fabric: { request_timeout: "60000" },
      "cors:https://example.com": { origins: "*" },
      admins: { anyone: "pw" },
      "smoosh.ignore": { "any/db": "true" },
      "smoosh.my_channel": { priority: "slack" },
      hastings: { anything: "x" },
    };
    expect(warningsOf({ ...couchLocalIni, smoosh: { ...couchLocalIni.smoosh, db_channels: "ratio_dbs,my_channel" } })).toEqual([]);
  });

  it("[upholster] is ours: its unknown keys are errors (not warnings), naming the nearest key", () => {
    const decoded = decodeConfig({ upholster: { prot: "80" } });
    expect(decoded._tag).toBe("Left");
    if (decoded._tag === "Left") expect(decoded.left[0]?.message).toContain("did you mean port?");
  });

  it("property: a config of known keys only is quiet, whatever the sections and values", () => {
    const sections = ["smoosh", "global_changes", "couchdb", "chttpd_auth", "smoosh.ratio_dbs", "smoosh.slack_views"];
    const known = fc.constantFrom(...sections).chain((section) =>
      fc.tuple(fc.constant(section), fc.dictionary(fc.constantFrom(...keysOf(section)), fc.constant("x"), { maxKeys: 4 })),
    );
    fc.assert(
      fc.property(fc.array(known, { maxLength: 6 }), (entries) => {
        const ini: IniSections = Object.fromEntries(entries);
        // Values are not what is checked here: keep only configs that decode.
        const decoded = decodeConfig(ini);
        if (decoded._tag === "Left") return;
        // (A channel list of `x` leaves `[smoosh.ratio_dbs]` unused: that warning is right, and not about keys.)
        expect(unknownKeyWarnings(ini, decoded.right.smoosh).filter((w) => w.key !== undefined)).toEqual([]);
      }),
    );
  });

  it("property: a known key cut short by one character is warned about, and that key suggested", () => {
    const sectionAndKey = fc.constantFrom("smoosh", "global_changes", "smoosh.ratio_dbs").chain((section) =>
      fc.tuple(fc.constant(section), fc.constantFrom(...keysOf(section).filter((key) => key.length >= 6))),
    );
    fc.assert(
      fc.property(sectionAndKey, ([section, key]) => {
        const typo = key.slice(0, -1);
        fc.pre(!keysOf(section).includes(typo));
        const [warning] = unknownKeyWarnings({ [section]: { [typo]: "1" } });
        expect(warning).toMatchObject({ section, key: typo, suggestion: key });
      }),
    );
  });
});

describe("the registry", () => {
  it("derives a section's keys from its decoder: registering a new subsystem's section is one decoder", () => {
    const decodeKen = (ini: IniSections) => readValue(ini, "ken", "index_updater_max_jobs", NonNegIntFromString, 4, []);
    const withKen = createKnownSections([keysReadBy(decodeKen)]);
    // CouchDB's [ken] keys stay known next to the decoder's.
    expect([...(withKen.keysOf("ken") as Set<string>)].sort()).toEqual(["batch_channels", "incremental_channels", "index_updater_max_jobs", "max_incremental_updates"]);
    // [ken] is registered by the indexing decoder: its keys are known, no longer "any".
    expect(KNOWN_SECTIONS.keysOf("ken")).toEqual(expect.any(Set));
    expect(unknownKeyWarnings({ ken: { index_updater_max_job: "3" } }, undefined, withKen)[0]?.suggestion).toBe("index_updater_max_jobs");
  });
});

describe("nearest key", () => {
  it("property: edit distance is a metric, and one insertion is 1", () => {
    const word = fc.stringMatching(/^[a-z_]{0,10}$/);
    fc.assert(
      fc.property(word, word, word, fc.constantFrom("a", "_"), (a, b, c, extra) => {
        expect(editDistance(a, a)).toBe(0);
        expect(editDistance(a, b)).toBe(editDistance(b, a));
        expect(editDistance(a, c)).toBeLessThanOrEqual(editDistance(a, b) + editDistance(b, c));
        expect(editDistance(a, `${a}${extra}`)).toBe(1);
      }),
    );
  });

  it("suggests only plausible slips", () => {
    expect(nearestKey("wait_sec", ["wait_secs", "staleness"])).toBe("wait_secs");
    expect(nearestKey("concurency", ["concurrency", "capacity"])).toBe("concurrency");
    expect(nearestKey("frobnicate", ["smoosh", "couchdb", "upholster"])).toBeUndefined();
  });
});
