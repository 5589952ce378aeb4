/**
 * What a geo route acts on (the db, or the db's design doc and index, from
 * the path), and the one place where the service's `GeoError`s become
 * answers: hastings' `{"error","reason"}` with the service's status, a
 * 500/503 from the service passed on as it is.
 */
import type { ServerResponse } from "node:http";
import { GeoError, type GeoIndexRef } from "../../ports/geo.js";
import { dbNameProblem } from "../db-name.js";
import { sendError } from "../respond.js";
import type { RouteContext } from "../router.js";

/** The path's db, or undefined after answering CouchDB's 400 for a name it would refuse. */
export function dbOf(ctx: RouteContext): string | undefined {
  const db = ctx.params[0] ?? "";
  const problem = dbNameProblem(db);
  if (problem === undefined) return db;
  sendError(ctx.res, problem.status, problem.error, problem.reason);
  return undefined;
}

/** `/{db}/_design/{ddoc}/_geo(_info)/{index}` as a ref (the ddoc with its `_design/` prefix), or undefined after a 400. */
export function indexRefOf(ctx: RouteContext): GeoIndexRef | undefined {
  const db = dbOf(ctx);
  if (db === undefined) return undefined;
  return { db, ddoc: `_design/${ctx.params[1] ?? ""}`, index: ctx.params[2] ?? "" };
}

/** Runs a handler; a GeoError is answered as hastings words it, anything else is rethrown (the server's 500, logged). */
export async function answeringGeoErrors(res: ServerResponse, handle: () => Promise<void>): Promise<void> {
  try {
    await handle();
  } catch (failure) {
    if (!(failure instanceof GeoError) || res.headersSent) throw failure;
    sendError(res, failure.status, failure.error, failure.reason);
  }
}
