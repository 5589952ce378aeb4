/**
 * `/_db_updates` refuses bad parameters with CouchDB's `error` and a
 * `reason` that names the parameter and the value (CouchDB says only
 * `invalid_integer`), and `descending` must be `true` or `false` (CouchDB
 * takes anything else as false).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_AUTH, rawGet, startHarness, type Harness } from "../db-updates/helpers.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const get = async (query: string) => {
  const r = await rawGet(`${h.url}/_db_updates?${query}`, { authorization: ADMIN_AUTH });
  return { status: r.status, body: JSON.parse(r.body) as unknown };
};

describe("/_db_updates parameters", () => {
  it.each([
    ["timeout=-1", 'invalid_integer: timeout must be a non-negative integer, got "-1"'],
    ["limit=abc", 'invalid_integer: limit must be a non-negative integer, got "abc"'],
    ["heartbeat=abc", 'invalid_integer: heartbeat must be a non-negative integer, got "abc"'],
    ["descending=maybe", 'descending must be true or false, got "maybe"'],
    [`limit=${"9".repeat(100)}`, `invalid_integer: limit must be a non-negative integer, got "${"9".repeat(40)}..."`],
  ])("%s -> 400 bad_request naming it", async (query, reason) => {
    expect(await get(query)).toEqual({ status: 400, body: { error: "bad_request", reason } });
  });

  it("descending=false and descending=true are fine", async () => {
    expect((await get("descending=false")).status).toBe(200);
    expect((await get("descending=true")).status).toBe(200);
  });
});
