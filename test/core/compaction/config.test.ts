import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isLeft, isRight } from "fp-ts/lib/Either.js";
import { decodeSmooshConfig, defaultSmooshConfig } from "../../../src/core/compaction/config.js";

describe("decodeSmooshConfig", () => {
  it("defaults are CouchDB 3.4's", () => {
    const c = defaultSmooshConfig;
    expect(c.dbChannels).toEqual(["upgrade_dbs", "ratio_dbs", "slack_dbs"]);
    expect(c.viewChannels).toEqual(["upgrade_views", "ratio_views", "slack_views"]);
    expect(c.cleanupChannels).toEqual(["index_cleanup"]);
    expect(c.stalenessMinutes).toBe(5);
    expect(c.waitSecs).toBe(30);
    expect(c.channels["ratio_dbs"]).toMatchObject({ priority: "ratio", minPriority: 2.0, minSizeBytes: 1048576, capacity: 9999, concurrency: 1 });
    expect(c.channels["slack_views"]).toMatchObject({ priority: "slack", minPriority: 536870912, maxPriority: Infinity });
    expect(c.channels["upgrade_dbs"]).toMatchObject({ priority: "upgrade", kind: "db" });
    expect(c.channels["index_cleanup"]).toMatchObject({ kind: "cleanup" });
  });

  it("the configured lists are exactly what runs (no built-ins merged back, unlike CouchDB 3.3)", () => {
    const r = decodeSmooshConfig({ smoosh: { db_channels: "ratio_dbs", view_channels: "big_views" } });
    if (!isRight(r)) throw new Error("expected a config");
    expect(r.right.dbChannels).toEqual(["ratio_dbs"]);
    expect(Object.keys(r.right.channels).sort()).toEqual(["big_views", "index_cleanup", "ratio_dbs"]);
    expect(r.right.channels["big_views"]).toMatchObject({ kind: "view", priority: "ratio" });
  });

  it("built-in names fix their method; others read priority", () => {
    const r = decodeSmooshConfig({
      smoosh: { db_channels: "ratio_dbs,big_dbs" },
      "smoosh.ratio_dbs": { priority: "slack" },
      "smoosh.big_dbs": { priority: "slack", from: "22:00", to: "06:00", strict_window: "true" },
      "smoosh.ignore": { secret: "true", other: "false" },
    });
    if (!isRight(r)) throw new Error("expected a config");
    expect(r.right.channels["ratio_dbs"]?.priority).toBe("ratio");
    expect(r.right.channels["big_dbs"]).toMatchObject({
      priority: "slack",
      minPriority: 536870912,
      window: { fromMinute: 1320, toMinute: 360 },
      strictWindow: true,
    });
    expect(r.right.ignoredDbs).toEqual(["secret"]);
  });

  it("every bad value is reported with its section, key and value", () => {
    const badValue = fc.constantFrom("", "abc", "-1", "1.5x", "NaN", "12:", "true?");
    const slot = fc.constantFrom(
      ["smoosh", "staleness"],
      ["smoosh", "wait_secs"],
      ["smoosh", "persist"],
      ["smoosh", "max_info_requests"],
      ["smoosh.ratio_dbs", "capacity"],
      ["smoosh.ratio_dbs", "concurrency"],
      ["smoosh.ratio_dbs", "min_priority"],
      ["smoosh.slack_views", "max_size"],
      ["smoosh.slack_views", "from"],
      ["smoosh.slack_views", "strict_window"],
      ["smoosh.ignore", "somedb"],
    );
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(slot, badValue), { minLength: 1, maxLength: 5, selector: ([s]) => s.join("/") }), (bads) => {
        const ini: Record<string, Record<string, string>> = {};
        for (const [[section, key], value] of bads) (ini[section] ??= {})[key] = value;
        const r = decodeSmooshConfig(ini);
        expect(isLeft(r)).toBe(true);
        if (!isLeft(r)) return;
        for (const [[section, key], value] of bads) {
          expect(r.left).toContainEqual(expect.objectContaining({ section, key, value }));
        }
        expect(r.left).toHaveLength(bads.length);
      }),
    );
  });

  it("a channel named like something every object inherits is refused, naming the list and the name", () => {
    for (const name of ["constructor", "__proto__", "toString"]) {
      const r = decodeSmooshConfig({ smoosh: { db_channels: `ratio_dbs,${name}` } });
      expect(isLeft(r) && r.left).toEqual([
        { section: "smoosh", key: "db_channels", value: `ratio_dbs,${name}`, message: `channel name ${JSON.stringify(name)} is reserved` },
      ]);
    }
  });

  it("a channel listed twice is an error naming the list", () => {
    const r = decodeSmooshConfig({ smoosh: { db_channels: "a,b", view_channels: "b" } });
    expect(isLeft(r) && r.left[0]).toMatchObject({ section: "smoosh", key: "view_channels", value: "b" });
  });
});
