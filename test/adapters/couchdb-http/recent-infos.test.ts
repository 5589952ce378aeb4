/** The adapter's memory of db infos others read, and the waits of compaction watchers on it. */
import { describe, expect, it } from "vitest";
import { RecentInfos } from "../../../src/adapters/couchdb-http/recent-infos.js";
import type { DbInfo } from "../../../src/ports/store.js";

const infoOf = (db: string): DbInfo => ({
  db,
  fileBytes: 10,
  activeBytes: 5,
  updateSeq: "1-x",
  updateSeqNumber: 1,
  docCount: 1,
  docDelCount: 0,
  compactionRunning: false,
  needsUpgrade: false,
});

/** Timers that fire only when told to. */
const manualTimers = () => {
  const pending = new Map<number, () => void>();
  let next = 0;
  return {
    pending,
    setTimeout: (fn: () => void) => {
      const id = next++;
      pending.set(id, fn);
      return () => pending.delete(id);
    },
    fireAll: () => {
      for (const [id, fn] of [...pending]) {
        pending.delete(id);
        fn();
      }
    },
  };
};

describe("RecentInfos.nextOf", () => {
  it("resolves on the next info of its db (not another's), and cancels its timer", async () => {
    const infos = new RecentInfos(10);
    const timers = manualTimers();
    let woke = false;
    const waiting = infos.nextOf("a", 1_000, timers).then(() => (woke = true));
    infos.note(infoOf("b"), 1, true);
    await Promise.resolve();
    expect(woke).toBe(false);
    infos.note(infoOf("a"), 2, true);
    await waiting;
    expect(timers.pending.size).toBe(0);
    expect(infos.waitingCount()).toBe(0);
  });

  it("resolves when the wait runs out, and leaves no listener behind", async () => {
    const infos = new RecentInfos(10);
    const timers = manualTimers();
    const waits = [infos.nextOf("a", 1_000, timers), infos.nextOf("a", 1_000, timers)];
    expect(infos.waitingCount()).toBe(2);
    timers.fireAll();
    await Promise.all(waits);
    expect(infos.waitingCount()).toBe(0);
    infos.note(infoOf("a"), 3, true); // nobody left to wake
  });
});
