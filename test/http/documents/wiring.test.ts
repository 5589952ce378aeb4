/**
 * `upholster run`'s choice of store mounts the document API on the embedded
 * store only: against CouchDB, CouchDB serves documents itself. Started as
 * the CLI starts it, nano can create a db and write into it.
 */
import { isLeft } from "fp-ts/lib/Either.js";
import nano from "nano";
import { describe, expect, it } from "vitest";
import { createRecordingLogger } from "../../../src/adapters/logging/index.js";
import { createMemoryStatePort } from "../../../src/adapters/state/index.js";
import type { MemoryStore } from "../../../src/adapters/memory/index.js";
import { chooseStore } from "../../../src/cli/choose-store.js";
import { decodeConfig, type UpholsterConfig } from "../../../src/config/load.js";
import type { IniSections } from "../../../src/core/shared/ini.js";
import { realScheduler } from "../../../src/runtime/scheduler.js";
import { createUpholster } from "../../../src/runtime/upholster.js";
import { ADMIN } from "./harness.js";

const configOf = (ini: IniSections): UpholsterConfig => {
  const decoded = decodeConfig(ini);
  if (isLeft(decoded)) throw new Error(JSON.stringify(decoded.left));
  return decoded.right;
};

const options = (ini: IniSections) => ({ config: configOf(ini), scheduler: realScheduler({ unref: true }), logger: createRecordingLogger(), state: createMemoryStatePort() });

describe("the document API in upholster run", () => {
  it("is mounted on the embedded store, and nano can use it", async () => {
    const ini: IniSections = { admins: { [ADMIN.name]: ADMIN.password }, chttpd_auth: { iterations: "10" } };
    const choice = await chooseStore(options(ini));
    expect(choice.subsystems.map((s) => s.name)).toContain("documents");
    const upholster = createUpholster({
      store: choice.store,
      events: choice.events,
      config: ini,
      logger: createRecordingLogger(),
      scheduler: realScheduler({ unref: true }),
      http: { port: 0, authenticator: await choice.authenticator() },
      subsystems: choice.subsystems,
    });
    await upholster.start();
    try {
      const couch = nano(upholster.httpAddress()!.url.replace("http://", `http://${ADMIN.name}:${ADMIN.password}@`));
      await couch.db.create("from-the-cli");
      const written = await couch.use<Record<string, unknown>>("from-the-cli").insert({ hello: "world" }, "greeting");
      expect(await couch.use("from-the-cli").get("greeting")).toMatchObject({ _rev: written.rev, hello: "world" });
      // The memory store builds views itself: the view routes are served.
      expect(upholster.status().subsystems["documents"]).toEqual({ views: true });
    } finally {
      await upholster.stop();
      await choice.close();
      (choice.store as MemoryStore).close();
    }
  });

  it("the embedded store's files compress bodies as [couchdb] file_compression says", async () => {
    const activeBytes = async (ini: IniSections): Promise<number> => {
      const choice = await chooseStore(options(ini));
      const store = choice.store as MemoryStore;
      try {
        store.createDb("padded");
        store.writeDocs("padded", [{ _id: "a", padding: "x".repeat(4000) }]);
        return (await store.dbInfo("padded"))?.activeBytes ?? 0;
      } finally {
        await choice.close();
        store.close();
      }
    };
    const snappy = await activeBytes({});
    expect(await activeBytes({ couchdb: { file_compression: "none" } })).toBeGreaterThan(snappy + 3500);
    expect(await activeBytes({ couchdb: { file_compression: "deflate_6" } })).toBeLessThan(snappy + 200);
  });

  it("is not mounted against CouchDB", async () => {
    const choice = await chooseStore(options({ couchdb: { url: "http://127.0.0.1:9" } }));
    try {
      expect(choice.subsystems.map((s) => s.name)).not.toContain("documents");
    } finally {
      await choice.close();
    }
  });
});
