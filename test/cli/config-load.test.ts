/** Config files: INI text -> CouchDB-style sections -> decoded config, every error named. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decodeConfig, formatConfigProblem, loadConfig } from "../../src/config/load.js";
import { mergeIni, parseIniText } from "../../src/config/ini-file.js";
import { flagsToIni } from "../../src/cli/run.js";

const sectionName = fc.stringMatching(/^[a-z][a-z_]{0,8}(\.[a-z][a-z0-9_]{0,8}){0,2}$/);
const key = fc.stringMatching(/^[a-z][a-z0-9_/]{0,12}$/);
const value = fc.oneof(fc.constantFrom("true", "false", "null", "infinity", "2.0", "0"), fc.stringMatching(/^[A-Za-z0-9_,./:-]{1,20}$/));
const iniSections = fc.dictionary(sectionName, fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 }), { maxKeys: 6 });

const toIniText = (sections: Record<string, Record<string, string>>): string =>
  Object.entries(sections)
    .map(([name, values]) => `[${name}]\n${Object.entries(values).map(([k, v]) => `${k} = ${v}`).join("\n")}\n`)
    .join("\n");

describe("INI files", () => {
  it("property: sections written as INI parse back to the same strings (dotted names flat, true/false/null stay strings)", () => {
    fc.assert(
      fc.property(iniSections, (sections) => {
        // A section that is a prefix of another (smoosh / smoosh.x) must not lose keys either.
        const parsed = parseIniText(toIniText(sections));
        expect(Object.keys(parsed.sections).sort()).toEqual(Object.keys(sections).sort());
        expect(parsed.errors).toEqual([]);
        for (const [name, values] of Object.entries(sections)) expect(parsed.sections[name]).toEqual(values);
      }),
    );
  });

  it("a key and a dotted section of the same name both survive", () => {
    const parsed = parseIniText("[smoosh]\nratio_dbs = 1\n[smoosh.ratio_dbs]\nconcurrency = 2\n");
    expect(parsed.sections).toEqual({ smoosh: { ratio_dbs: "1" }, "smoosh.ratio_dbs": { concurrency: "2" } });
  });

  it("keys outside a section and key[] lists are errors naming them", () => {
    const parsed = parseIniText("stray = 1\n[smoosh]\nlist[] = a\nlist[] = b\n");
    expect(parsed.errors.map((e) => `${e.section}|${e.key}`)).toEqual(["|stray", "smoosh|list"]);
  });

  it("property: later layers win key by key", () => {
    fc.assert(
      fc.property(iniSections, iniSections, (base, over) => {
        const merged = mergeIni(base, over);
        for (const [name, values] of Object.entries(over)) for (const [k, v] of Object.entries(values)) expect(merged[name]?.[k]).toBe(v);
        for (const [name, values] of Object.entries(base))
          for (const [k, v] of Object.entries(values)) if (over[name]?.[k] === undefined) expect(merged[name]?.[k]).toBe(v);
      }),
    );
  });
});

describe("decoding", () => {
  it("defaults: port 5985 on loopback, demo on, log level info, logs by terminal, node upholster@127.0.0.1, status for admins, CouchDB's smoosh channels", () => {
    const decoded = decodeConfig({});
    expect(decoded._tag).toBe("Right");
    if (decoded._tag !== "Right") return;
    expect(decoded.right.upholster).toEqual({
      port: 5985,
      bindAddress: "127.0.0.1",
      demo: true,
      logLevel: "info",
      logFormat: "auto",
      nodeName: "upholster@127.0.0.1",
      publicStatus: false,
    });
    expect(decoded.right.smoosh.dbChannels).toEqual(["upgrade_dbs", "ratio_dbs", "slack_dbs"]);
  });

  it("property: every bad value is reported, each naming its section, key and value", () => {
    const bad = fc.record(
      {
        port: fc.constantFrom("http", "-1", "65536", "80.5"),
        demo: fc.constantFrom("yes", "1", "TRUE"),
        log_level: fc.constantFrom("loud", "INFO", ""),
        wait_secs: fc.constantFrom("soon", "-5", "1.5"),
        concurrency: fc.constantFrom("many", "-1"),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(bad, (chosen) => {
        const ini: Record<string, Record<string, string>> = {};
        const expected: string[] = [];
        const put = (section: string, k: string, v: string | undefined) => {
          if (v === undefined) return;
          (ini[section] ??= {})[k] = v;
          expected.push(`[${section}] ${k} = ${JSON.stringify(v)}`);
        };
        put("upholster", "port", chosen.port);
        put("upholster", "demo", chosen.demo);
        put("upholster", "log_level", chosen.log_level);
        put("smoosh", "wait_secs", chosen.wait_secs);
        put("smoosh.ratio_dbs", "concurrency", chosen.concurrency);
        const decoded = decodeConfig(ini);
        if (expected.length === 0) {
          expect(decoded._tag).toBe("Right");
          return;
        }
        expect(decoded._tag).toBe("Left");
        if (decoded._tag !== "Left") return;
        const messages = decoded.left.map(formatConfigProblem);
        expect(messages).toHaveLength(expected.length);
        for (const prefix of expected) expect(messages.some((m) => m.startsWith(prefix))).toBe(true);
      }),
    );
  });

  it("unknown keys in [upholster] are errors (it is our section: typos are not silently ignored)", () => {
    const decoded = decodeConfig({ upholster: { prot: "80" } });
    expect(decoded._tag === "Left" && decoded.left.map(formatConfigProblem)).toEqual([expect.stringContaining('[upholster] prot = "80": unknown key')]);
  });

  it("[couchdb] file_compression: CouchDB's values, snappy by default; a bad one is refused by name", () => {
    const byDefault = decodeConfig({});
    expect(byDefault._tag === "Right" && byDefault.right.couchdb.fileCompression).toBe("snappy");
    for (const value of ["none", "snappy", "deflate_1", "deflate_9"]) {
      const good = decodeConfig({ couchdb: { file_compression: value } });
      expect(good._tag === "Right" && good.right.couchdb.fileCompression).toBe(value);
    }
    const bad = decodeConfig({ couchdb: { file_compression: "deflate_10" } });
    expect(bad._tag === "Left" && bad.left.map(formatConfigProblem)).toEqual([
      expect.stringContaining('[couchdb] file_compression = "deflate_10": expected none, snappy or deflate_1 to deflate_9'),
    ]);
  });

  it("[chttpd] max_db_number_for_dbs_info_req: CouchDB's key and default (100); a bad one is refused by name; the rest of [chttpd] stays quiet", () => {
    const byDefault = decodeConfig({});
    expect(byDefault._tag === "Right" && byDefault.right.couchdb.dbsInfoMaxKeys).toBe(100);
    const set = decodeConfig({ chttpd: { max_db_number_for_dbs_info_req: "20", port: "5984", bind_address: "0.0.0.0" } });
    expect(set._tag === "Right" && set.right.couchdb.dbsInfoMaxKeys).toBe(20);
    for (const value of ["0", "-3", "ten", "1.5", "10001"]) {
      const bad = decodeConfig({ chttpd: { max_db_number_for_dbs_info_req: value } });
      expect(bad._tag === "Left" && bad.left.map(formatConfigProblem)).toEqual([
        expect.stringContaining(`[chttpd] max_db_number_for_dbs_info_req = ${JSON.stringify(value)}: expected an integer from 1 to 10000`),
      ]);
    }
  });

  it("the new [upholster] keys are decoded and refused by name: node_name, public_status, log_format", () => {
    const good = decodeConfig({ upholster: { node_name: "east@10.0.0.1", public_status: "true", log_format: "json" } });
    expect(good._tag === "Right" && good.right.upholster).toMatchObject({ nodeName: "east@10.0.0.1", publicStatus: true, logFormat: "json" });
    const bad = decodeConfig({ upholster: { node_name: "a/b", public_status: "maybe", log_format: "loud" } });
    expect(bad._tag === "Left" && bad.left.map(formatConfigProblem)).toEqual([
      expect.stringContaining('[upholster] log_format = "loud": expected auto, pretty or json'),
      expect.stringContaining('[upholster] node_name = "a/b": expected a node name'),
      expect.stringContaining('[upholster] public_status = "maybe": expected true or false'),
    ]);
    expect(flagsToIni({ logFormat: "pretty" })).toEqual({ upholster: { log_format: "pretty" } });
  });

  it("loads a file, and command-line flags override it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "upholster-config-"));
    const file = join(dir, "u.ini");
    writeFileSync(file, "[upholster]\nport = 7000\ndemo = false\n[smoosh]\nwait_secs = 3\n[smoosh.ratio_dbs]\nmin_priority = 4.0\n");
    const loaded = await loadConfig({ path: file, overrides: flagsToIni({ port: "7001", demo: true }) });
    expect(loaded._tag).toBe("Right");
    if (loaded._tag !== "Right") return;
    expect(loaded.right.upholster.port).toBe(7001);
    expect(loaded.right.upholster.demo).toBe(true);
    expect(loaded.right.smoosh.waitSecs).toBe(3);
    expect(loaded.right.smoosh.channels["ratio_dbs"]?.minPriority).toBe(4);
    expect(loaded.right.ini["smoosh.ratio_dbs"]).toEqual({ min_priority: "4.0" });
  });

  it("a file that cannot be read is one problem naming the file", async () => {
    const loaded = await loadConfig({ path: "/nonexistent/dir/u.ini" });
    expect(loaded._tag === "Left" && loaded.left.map(formatConfigProblem)).toEqual([expect.stringContaining("/nonexistent/dir/u.ini: cannot read")]);
  });
});
