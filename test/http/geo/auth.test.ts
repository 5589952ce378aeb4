/**
 * Who may call the `_geo` routes: the server's guard with the db-reader rule
 * the document routes use. No credentials: 401; a named user who is not a
 * member of the db (its `_security`): 403; a wrong password: 401; a member
 * or a server admin: in. Access is checked before the method (CouchDB
 * authorizes a path before it routes it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authAs, call, startGeoServer, type GeoServer } from "./harness.js";
import { loadPlaces } from "./fixture.js";

let geo: GeoServer;
beforeAll(async () => {
  geo = await startGeoServer();
  loadPlaces(geo.service);
});
afterAll(() => geo.server.close());

const ROUTES = (db: string) =>
  [
    ["GET", `/${db}/_design/geo/_geo/points?bbox=-180,-90,180,90`, 200],
    ["GET", `/${db}/_design/geo/_geo_info/points`, 200],
    ["POST", `/${db}/_geo_cleanup`, 202],
    ["PUT", `/${db}/_design/geo/_geo/points?bbox=-180,-90,180,90`, 405],
  ] as const;

const ANONYMOUS = { error: "unauthorized", reason: "You are not authorized to access this db." };
const NOT_A_MEMBER = { error: "forbidden", reason: "You are not allowed to access this db." };
const BAD_CREDENTIALS = { error: "unauthorized", reason: "Name or password is incorrect." };

describe("who may call _geo, _geo_info and _geo_cleanup", () => {
  it.each(ROUTES("places"))("%s %s without credentials: 401", async (method, path) => {
    expect(await call(geo.url, method, path, {})).toMatchObject({ status: 401, json: ANONYMOUS });
  });

  it.each(ROUTES("places"))("%s %s with a wrong password: 401", async (method, path) => {
    expect(await call(geo.url, method, path, authAs("ann", "wrong"))).toMatchObject({ status: 401, json: BAD_CREDENTIALS });
  });

  it.each(ROUTES("places"))("%s %s by a user who does not read the db: 403", async (method, path) => {
    expect(await call(geo.url, method, path, authAs("bob"))).toMatchObject({ status: 403, json: NOT_A_MEMBER });
  });

  it.each(ROUTES("private"))("%s %s by a reader of another db: 403", async (method, path) => {
    expect(await call(geo.url, method, path, authAs("ann"))).toMatchObject({ status: 403, json: NOT_A_MEMBER });
  });

  it.each(ROUTES("places"))("%s %s by a reader of the db: in (%i)", async (method, path, status) => {
    expect((await call(geo.url, method, path, authAs("ann"))).status).toBe(status);
  });

  it.each([...ROUTES("places"), ...ROUTES("private")])("%s %s by a server admin: in (%i)", async (method, path, status) => {
    expect((await call(geo.url, method, path, authAs("boss"))).status).toBe(status);
  });

  it("the guard answers before the query string is looked at: an anonymous bad query is a 401, not a 400", async () => {
    expect((await call(geo.url, "GET", "/places/_design/geo/_geo/points?lat=abc", {})).status).toBe(401);
  });
});
