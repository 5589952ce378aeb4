/** Learning a server's `_dbs_info` key limit from its answers (src/adapters/couchdb-http/dbs-info-limit.ts). */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DbsInfoLimit } from "../../../src/adapters/couchdb-http/dbs-info-limit.js";

/**
 * Requests as the store sends them: `want` names (a batch may be short of
 * the limit's size), refused when more than the server's `limit` (and more
 * than one: a single refused name ends batching). Returns the refusals.
 */
const drive = (learner: DbsInfoLimit, limit: () => number, wants: readonly number[]): number => {
  let refusals = 0;
  for (const want of wants) {
    for (let left = want; left > 0; ) {
      const keys = Math.min(left, learner.keysPerRequest);
      if (keys > limit() && keys > 1) {
        learner.refuse(keys);
        refusals++;
        continue;
      }
      learner.accept(keys);
      left -= keys;
    }
  }
  return refusals;
};

describe("the _dbs_info key limit, learnt", () => {
  it("property: with full batches it settles on exactly min(configured, server's limit), after at most log2(configured) + 1 refusals", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 500 }), (configured, limit) => {
        const learner = new DbsInfoLimit(configured);
        // Far more names than any batch, again and again: every probe can be made.
        const refusals = drive(learner, () => limit, Array.from({ length: 30 }, () => 2_000));
        expect(learner.keysPerRequest).toBe(Math.min(configured, limit));
        expect(learner.settled).toBe(true);
        expect(refusals).toBeLessThanOrEqual(Math.ceil(Math.log2(configured)) + 1);
        if (limit >= configured) expect(refusals).toBe(0);
      }),
    );
  });

  it("property: whatever the batch sizes, it never asks for fewer than one key, never settles above the limit, and refuses a size at most once", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 300 }), fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 60 }), (configured, limit, wants) => {
        const learner = new DbsInfoLimit(configured);
        const refusedSizes: number[] = [];
        const original = learner.refuse.bind(learner);
        learner.refuse = (keys) => {
          refusedSizes.push(keys);
          return original(keys);
        };
        drive(learner, () => limit, wants);
        expect(learner.keysPerRequest).toBeGreaterThanOrEqual(1);
        if (learner.settled && refusedSizes.length > 0) expect(learner.keysPerRequest).toBeLessThanOrEqual(limit);
        expect(new Set(refusedSizes).size).toBe(refusedSizes.length);
      }),
    );
  });

  it("property: a limit lowered while running (an operator's config change) is found again", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 300 }), fc.integer({ min: 2, max: 300 }), fc.integer({ min: 1, max: 299 }), (configured, before, after) => {
        fc.pre(after < Math.min(configured, before));
        const learner = new DbsInfoLimit(configured);
        let limit = before;
        drive(learner, () => limit, Array.from({ length: 30 }, () => 1_000));
        limit = after;
        drive(learner, () => limit, Array.from({ length: 30 }, () => 1_000));
        expect(learner.keysPerRequest).toBe(after);
      }),
    );
  });

  it("property: told the server's limit (read from its config), whatever was learnt before, it asks for min(configured, limit) with no refusal, and still finds a limit lowered after", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 300 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 20 }),
        fc.integer({ min: 1, max: 300 }),
        (configured, earlier, limit, earlierWants, lowered) => {
          const learner = new DbsInfoLimit(configured);
          // Whatever an earlier limit taught it (refusals, a settled size, a search half done)...
          drive(learner, () => earlier, earlierWants);
          learner.told(limit);
          expect(learner.keysPerRequest).toBe(Math.min(configured, limit));
          expect(learner.settled).toBe(true);
          // ...the config's limit holds from the first request: nothing refused.
          expect(drive(learner, () => limit, Array.from({ length: 10 }, () => 1_000))).toBe(0);
          expect(learner.keysPerRequest).toBe(Math.min(configured, limit));
          // An operator lowers it later: found by refusals, as without the config.
          drive(learner, () => lowered, Array.from({ length: 30 }, () => 1_000));
          expect(learner.keysPerRequest).toBe(Math.min(configured, limit, lowered));
        },
      ),
    );
  });

  it("a server that refuses even two keys ends at one key a request (the store then reads db by db)", () => {
    const learner = new DbsInfoLimit(100);
    expect(drive(learner, () => 1, [100])).toBe(7);
    expect(learner.keysPerRequest).toBe(1);
    expect(learner.settled).toBe(true);
  });
});
