/**
 * `/_smoosh/*`: CouchDB 3.4's status endpoint, plus the operator commands
 * CouchDB only offers from a remote Erlang shell (suspend, resume, enqueue,
 * enqueue_all, flush) — here they are HTTP, with io-ts-decoded bodies.
 *
 * Status is also served at `/_node/_local/_smoosh/status`, CouchDB's path, so
 * tools written for CouchDB 3.4 work unchanged. Status is read-only (admins,
 * or anyone with `public_status`); every command is for server admins.
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import type { ServerResponse } from "node:http";
import type { SmooshStatus } from "../../core/compaction/index.js";
import { designDocId } from "../../core/shared/names.js";
import { errorText } from "../../core/shared/error-text.js";
import { ADMIN_ONLY, STATUS } from "../auth/access.js";
import { readJsonBody, type HttpError } from "../body.js";
import { dbNameProblem } from "../db-name.js";
import { sendError, sendJson, sendOk } from "../respond.js";
import { routeTable } from "../router.js";
import type { RouteHandler } from "../types.js";

/** What the routes need from the compaction daemon. */
export interface SmooshControl {
  status(): SmooshStatus;
  suspend(): void;
  resume(): void;
  flush(): void;
  enqueue(db: string, ddoc?: string): void;
  enqueueAll(scope: "dbs" | "views"): void;
}

/** What the routes ask the store: does the db (or design doc) of an enqueue exist? Absent: not checked. */
export interface SmooshObjects {
  dbInfo(db: string): Promise<unknown>;
  viewIndexInfo(db: string, ddoc: string): Promise<unknown>;
}

interface DdocBrand {
  readonly Ddoc: unique symbol;
}
const DdocC = t.brand(t.string, (s): s is t.Branded<string, DdocBrand> => s.length > 0 && s !== "_design/" && s.length <= 1024, "Ddoc");

// The db is a string here; CouchDB's name rule is checked next, with CouchDB's own 400 (db-name.ts).
const EnqueueBodyC = t.intersection([t.type({ db: t.string }), t.partial({ ddoc: DdocC })], "a JSON object {\"db\", \"ddoc\"?}");
const EnqueueAllBodyC = t.partial({ scope: t.keyof({ dbs: null, views: null }, '"dbs" or "views"') }, "a JSON object {\"scope\"?}");

// Friendlier names in error messages than io-ts's generated ones.
const names: Record<string, string> = {
  Ddoc: "a design document name (\"name\" or \"_design/name\")",
};

const fail = (res: ServerResponse, error: HttpError): void =>
  sendError(res, error.status, error.error, Object.entries(names).reduce((text, [from, to]) => text.split(from).join(to), error.reason));

/** Same members, CouchDB's key order (`waiting`, `starting`, `active`), so the bytes match too. */
export const couchStatusBody = (status: SmooshStatus): SmooshStatus => ({
  channels: Object.fromEntries(
    Object.entries(status.channels).map(([name, c]) => [
      name,
      { waiting: { size: c.waiting.size, min: c.waiting.min, max: c.waiting.max }, starting: c.starting, active: c.active },
    ]),
  ),
});

/** Every path is also served under `/_node/_local` (and `/_node/{node_name}`, see node-routes.ts), as CouchDB's status is. */
const smooshPath = (name: string): RegExp => new RegExp(`^(?:/_node/_local)?/_smoosh/${name}/?$`);

export function smooshRoutes(smoosh: SmooshControl, objects?: SmooshObjects): RouteHandler {
  const command =
    (run: () => void) =>
    ({ res }: { res: ServerResponse }): void => {
      run();
      sendOk(res);
    };
  return routeTable([
    { path: smooshPath("status"), access: STATUS, methods: { GET: ({ res }) => sendJson(res, 200, couchStatusBody(smoosh.status())) } },
    { path: smooshPath("suspend"), access: ADMIN_ONLY, methods: { POST: command(() => smoosh.suspend()) } },
    { path: smooshPath("resume"), access: ADMIN_ONLY, methods: { POST: command(() => smoosh.resume()) } },
    { path: smooshPath("flush"), access: ADMIN_ONLY, methods: { POST: command(() => smoosh.flush()) } },
    {
      path: smooshPath("enqueue"),
      access: ADMIN_ONLY,
      methods: {
        POST: async ({ req, res }) => {
          const body = await readJsonBody(req, EnqueueBodyC);
          if (isLeft(body)) return fail(res, body.left);
          const { db, ddoc } = body.right;
          const problem = dbNameProblem(db) ?? (await missingObject(objects, db, ddoc));
          if (problem !== undefined) return sendError(res, problem.status, problem.error, problem.reason);
          smoosh.enqueue(db, ddoc);
          sendOk(res, 202);
        },
      },
    },
    {
      path: smooshPath("enqueue_all"),
      access: ADMIN_ONLY,
      methods: {
        POST: async ({ req, res }) => {
          // No body (or no scope) means both, like running enqueue_all_dbs and enqueue_all_views.
          const body = await readJsonBody(req, EnqueueAllBodyC, { emptyAs: {} });
          if (isLeft(body)) return fail(res, body.left);
          const scope = body.right.scope;
          if (scope === undefined || scope === "dbs") smoosh.enqueueAll("dbs");
          if (scope === undefined || scope === "views") smoosh.enqueueAll("views");
          sendOk(res, 202);
        },
      },
    },
  ]);
}

/** CouchDB's 404s (fixtures 42, 63) for a db or design doc that does not exist; 503 when the store cannot tell. */
async function missingObject(objects: SmooshObjects | undefined, db: string, ddoc: string | undefined): Promise<HttpError | undefined> {
  if (objects === undefined) return undefined;
  try {
    if ((await objects.dbInfo(db)) === undefined) return { status: 404, error: "not_found", reason: "Database does not exist." };
    if (ddoc !== undefined && (await objects.viewIndexInfo(db, designDocId(ddoc))) === undefined) return { status: 404, error: "not_found", reason: "missing" };
    return undefined;
  } catch (error) {
    return { status: 503, error: "service_unavailable", reason: `cannot check ${JSON.stringify(db)} now: ${errorText(error)}` };
  }
}
