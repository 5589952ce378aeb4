import { isLeft, isRight } from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { decodeIndexingConfig, defaultIndexingConfig } from "../../../src/core/indexing/index.js";

describe("[ken], [ken.ignore], [fabric] index_updater_*", () => {
  it("defaults: CouchDB's [ken], upholster's [fabric] (delay 250 ms, resolution 100 ms, cleanup on)", () => {
    const decoded = decodeIndexingConfig({});
    expect(decoded).toEqual({ _tag: "Right", right: defaultIndexingConfig });
    expect(defaultIndexingConfig).toMatchObject({ batchChannels: 20, incrementalChannels: 80, maxIncrementalUpdates: 1000, batchSize: 1, kenDelayMs: 5000, pruneIntervalMs: 60_000 });
    expect(defaultIndexingConfig).toMatchObject({ delayMs: 250, resolutionMs: 100, removeOldIndices: true, enabled: true, catchUp: true });
  });

  it("reads CouchDB's keys, the ignore list and the query servers", () => {
    const decoded = decodeIndexingConfig({
      ken: { batch_channels: "0", incremental_channels: "0", max_incremental_updates: "50", delay: "100", batch_size: "5", prune_interval: "2000", catch_up: "false" },
      "ken.ignore": { big: "true", small: "false" },
      fabric: { index_updater_enabled: "false", index_updater_delay_msec: "60000", index_updater_resolution_msec: "10000", index_updater_remove_old_indices: "false" },
      query_servers: { python: "/usr/bin/couchpy" },
    });
    if (!isRight(decoded)) throw new Error(JSON.stringify(decoded.left));
    expect(decoded.right).toMatchObject({
      batchChannels: 0,
      incrementalChannels: 0,
      maxIncrementalUpdates: 50,
      kenDelayMs: 100,
      batchSize: 5,
      pruneIntervalMs: 2000,
      catchUp: false,
      enabled: false,
      delayMs: 60_000,
      resolutionMs: 10_000,
      removeOldIndices: false,
      ignoredDbs: ["big"],
      allowedLanguages: ["javascript", "python", "query"],
    });
  });

  it("names every bad value, all at once", () => {
    const decoded = decodeIndexingConfig({
      ken: { batch_channels: "many", batch_size: "0", prune_interval: "500" },
      "ken.ignore": { db: "yes" },
      fabric: { index_updater_delay_msec: "-1", index_updater_enabled: "on" },
    });
    if (!isLeft(decoded)) throw new Error("should not decode");
    expect(decoded.left.map((e) => `[${e.section}] ${e.key} = ${e.value}: ${e.message}`).sort()).toEqual([
      "[fabric] index_updater_delay_msec = -1: expected a non-negative integer",
      "[fabric] index_updater_enabled = on: expected true or false",
      "[ken.ignore] db = yes: expected true or false",
      "[ken] batch_channels = many: expected a non-negative integer",
      "[ken] batch_size = 0: expected a positive integer",
      "[ken] prune_interval = 500: expected more than 1000 (ms)",
    ]);
  });
});
