/**
 * `/_smoosh/*`: CouchDB 3.4's status endpoint, plus the operator commands
 * CouchDB only offers from a remote Erlang shell (suspend, resume, enqueue,
 * enqueue_all, flush) — here they are HTTP, with io-ts-decoded bodies.
 *
 * Status is also served at `/_node/{node}/_smoosh/status`, CouchDB's path, so
 * tools written for CouchDB 3.4 work unchanged.
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import type { ServerResponse } from "node:http";
import type { SmooshStatus } from "../../core/compaction/index.js";
import { readJsonBody, type HttpError } from "../body.js";
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

interface DbNameBrand {
  readonly DbName: unique symbol;
}
/**
 * CouchDB's database name rule, plus the system dbs (`_users`, ...) and
 * shard paths (`shards/00000000-7fffffff/db.123`), which all match it.
 */
const DbNameC = t.brand(
  t.string,
  (s): s is t.Branded<string, DbNameBrand> => /^(?:[a-z][a-z0-9_$()+/-]*|_[a-z0-9_$()+/-]+)$/.test(s) && s.length <= 1024,
  "DbName",
);
interface DdocBrand {
  readonly Ddoc: unique symbol;
}
const DdocC = t.brand(t.string, (s): s is t.Branded<string, DdocBrand> => s.length > 0 && s !== "_design/" && s.length <= 1024, "Ddoc");

const EnqueueBodyC = t.intersection([t.type({ db: DbNameC }), t.partial({ ddoc: DdocC })], "a JSON object {\"db\", \"ddoc\"?}");
const EnqueueAllBodyC = t.partial({ scope: t.keyof({ dbs: null, views: null }, '"dbs" or "views"') }, "a JSON object {\"scope\"?}");

// Friendlier names in error messages than io-ts's generated ones.
const names: Record<string, string> = {
  DbName: "a database name (lowercase, starting with a letter; CouchDB's rule)",
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

export function smooshRoutes(smoosh: SmooshControl): RouteHandler {
  const command =
    (run: () => void) =>
    ({ res }: { res: ServerResponse }): void => {
      run();
      sendOk(res);
    };
  return routeTable([
    {
      path: /^(?:\/_node\/[^/]+)?\/_smoosh\/status\/?$/,
      methods: { GET: ({ res }) => sendJson(res, 200, couchStatusBody(smoosh.status())) },
    },
    { path: /^\/_smoosh\/suspend$/, methods: { POST: command(() => smoosh.suspend()) } },
    { path: /^\/_smoosh\/resume$/, methods: { POST: command(() => smoosh.resume()) } },
    { path: /^\/_smoosh\/flush$/, methods: { POST: command(() => smoosh.flush()) } },
    {
      path: /^\/_smoosh\/enqueue$/,
      methods: {
        POST: async ({ req, res }) => {
          const body = await readJsonBody(req, EnqueueBodyC);
          if (isLeft(body)) return fail(res, body.left);
          smoosh.enqueue(body.right.db, body.right.ddoc);
          sendOk(res, 202);
        },
      },
    },
    {
      path: /^\/_smoosh\/enqueue_all$/,
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
