/**
 * `/_upholster/indexing/*`: the operator's side of background indexing.
 * Every input is decoded with io-ts; errors are CouchDB's bodies.
 *
 *   POST   /_upholster/indexing/enqueue     {"db"}            202: look at it now
 *   POST   /_upholster/indexing/prioritize  {"db","ddoc"?}    202: its indexes go first until fresh
 *   GET    /_upholster/indexing/lag?db=&ddoc=                 each index's lag, asked now
 *   POST   /_upholster/indexing/deploy      {"db","ddoc","doc"}  202: stage, build, swap
 *   GET    /_upholster/indexing/deploy?db=&ddoc=              the deploy's phase and lag
 *   DELETE /_upholster/indexing/deploy?db=&ddoc=              202: cancel (the stage is removed)
 *
 * Actions are for server admins; `lag` is read-only status.
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import type { ServerResponse } from "node:http";
import { designDocId } from "../../core/shared/names.js";
import { errorText } from "../../core/shared/error-text.js";
import { ADMIN_ONLY, STATUS } from "../auth/access.js";
import { describeErrors, readJsonBody, type HttpError } from "../body.js";
import { dbNameProblem } from "../db-name.js";
import { sendError, sendJson } from "../respond.js";
import { routeTable } from "../router.js";
import type { RouteHandler } from "../types.js";

/** What the routes need from the indexer (the runtime's daemon satisfies it). */
export interface IndexingControl {
  enqueue(db: string): void;
  prioritize(db: string, ddoc?: string): void;
  lag(db: string, ddoc?: string): Promise<unknown>;
  deploy(db: string, ddoc: string, body: Readonly<Record<string, unknown>>): { readonly ok: true; readonly resumed: boolean } | { readonly ok: false; readonly reason: string };
  deployStatus(db: string, ddoc: string): unknown;
  cancelDeploy(db: string, ddoc: string): boolean;
  /** Whether the db is in `[ken.ignore]` (enqueue answers 409). */
  isIgnored(db: string): boolean;
}

/** CouchDB's `max_document_size` default: a design doc body is a document. */
export const MAX_DEPLOY_BODY_BYTES = 8_000_000;

interface DdocBrand {
  readonly Ddoc: unique symbol;
}
const DdocC = t.brand(t.string, (s): s is t.Branded<string, DdocBrand> => s.length > 0 && s !== "_design/" && s.length <= 1024, "Ddoc");
const ObjectC = t.record(t.string, t.unknown, "a JSON object (the design doc)");

const DbBodyC = t.type({ db: t.string }, "a JSON object {\"db\"}");
const PrioritizeBodyC = t.intersection([t.type({ db: t.string }), t.partial({ ddoc: DdocC })], "a JSON object {\"db\", \"ddoc\"?}");
const DeployBodyC = t.type({ db: t.string, ddoc: DdocC, doc: ObjectC }, "a JSON object {\"db\", \"ddoc\", \"doc\"}");
const LagQueryC = t.intersection([t.type({ db: t.string }), t.partial({ ddoc: DdocC })], "query parameters db (and ddoc)");
const DeployQueryC = t.type({ db: t.string, ddoc: DdocC }, "query parameters db and ddoc");

const names: Record<string, string> = { Ddoc: "a design document name (\"name\" or \"_design/name\")" };
const friendly = (reason: string): string => Object.entries(names).reduce((text, [from, to]) => text.split(from).join(to), reason);

const fail = (res: ServerResponse, error: HttpError): void => sendError(res, error.status, error.error, friendly(error.reason));

const queryOf = <A>(url: URL, codec: t.Decoder<unknown, A>): { ok: true; value: A } | { ok: false; error: HttpError } => {
  const decoded = codec.decode(Object.fromEntries(url.searchParams));
  return isLeft(decoded) ? { ok: false, error: { status: 400, error: "bad_request", reason: describeErrors(decoded.left) } } : { ok: true, value: decoded.right };
};

/** The design doc to deploy: its `_id`, if any, must be the target; `_rev` is ignored; it cannot be a deletion. */
const deployBodyProblem = (ddoc: string, doc: Record<string, unknown>): HttpError | undefined => {
  if (doc["_id"] !== undefined && doc["_id"] !== ddoc) return { status: 400, error: "bad_request", reason: `doc._id: expected ${JSON.stringify(ddoc)} or nothing, got ${JSON.stringify(doc["_id"])}` };
  if (doc["_deleted"] === true) return { status: 400, error: "bad_request", reason: "doc._deleted: a deploy cannot delete a design doc" };
  return undefined;
};

const withoutMeta = (doc: Record<string, unknown>): Record<string, unknown> => {
  const { _id: _i, _rev: _r, ...body } = doc;
  return body;
};

const path = (name: string): RegExp => new RegExp(`^/_upholster/indexing/${name}/?$`);

export function indexingRoutes(control: IndexingControl): RouteHandler {
  const checkDb = (res: ServerResponse, db: string): boolean => {
    const problem = dbNameProblem(db);
    if (problem !== undefined) fail(res, problem);
    return problem === undefined;
  };
  return routeTable([
    {
      path: path("enqueue"),
      access: ADMIN_ONLY,
      methods: {
        POST: async ({ req, res }) => {
          const body = await readJsonBody(req, DbBodyC);
          if (isLeft(body)) return fail(res, body.left);
          if (!checkDb(res, body.right.db)) return;
          if (control.isIgnored(body.right.db)) return sendError(res, 409, "conflict", `${body.right.db} is in [ken.ignore]`);
          control.enqueue(body.right.db);
          sendJson(res, 202, { ok: true });
        },
      },
    },
    {
      path: path("prioritize"),
      access: ADMIN_ONLY,
      methods: {
        POST: async ({ req, res }) => {
          const body = await readJsonBody(req, PrioritizeBodyC);
          if (isLeft(body)) return fail(res, body.left);
          if (!checkDb(res, body.right.db)) return;
          control.prioritize(body.right.db, body.right.ddoc === undefined ? undefined : designDocId(body.right.ddoc));
          sendJson(res, 202, { ok: true });
        },
      },
    },
    {
      path: path("lag"),
      access: STATUS,
      methods: {
        GET: async ({ res, url }) => {
          const query = queryOf(url, LagQueryC);
          if (!query.ok) return fail(res, query.error);
          if (!checkDb(res, query.value.db)) return;
          try {
            const ddoc = query.value.ddoc === undefined ? undefined : designDocId(query.value.ddoc);
            sendJson(res, 200, { db: query.value.db, indexes: await control.lag(query.value.db, ddoc) });
          } catch (error) {
            if (error instanceof Error && error.name === "DbNotFoundError") return sendError(res, 404, "not_found", "Database does not exist.");
            sendError(res, 503, "service_unavailable", `cannot ask for ${query.value.db} now: ${errorText(error)}`);
          }
        },
      },
    },
    {
      path: path("deploy"),
      access: ADMIN_ONLY,
      methods: {
        POST: async ({ req, res }) => {
          const body = await readJsonBody(req, DeployBodyC, { limitBytes: MAX_DEPLOY_BODY_BYTES });
          if (isLeft(body)) return fail(res, body.left);
          const { db, doc } = body.right;
          const ddoc = designDocId(body.right.ddoc);
          if (!checkDb(res, db)) return;
          const problem = deployBodyProblem(ddoc, doc);
          if (problem !== undefined) return fail(res, problem);
          const answer = control.deploy(db, ddoc, withoutMeta(doc));
          if (!answer.ok) return sendError(res, 409, "conflict", answer.reason);
          sendJson(res, 202, { ok: true, db, ddoc, resumed: answer.resumed, status: control.deployStatus(db, ddoc) ?? null });
        },
        GET: ({ res, url }) => {
          const query = queryOf(url, DeployQueryC);
          if (!query.ok) return fail(res, query.error);
          const status = control.deployStatus(query.value.db, designDocId(query.value.ddoc));
          if (status === undefined) return sendError(res, 404, "not_found", "no deploy of this design doc");
          sendJson(res, 200, status);
        },
        DELETE: ({ res, url }) => {
          const query = queryOf(url, DeployQueryC);
          if (!query.ok) return fail(res, query.error);
          if (!control.cancelDeploy(query.value.db, designDocId(query.value.ddoc))) return sendError(res, 404, "not_found", "no deploy of this design doc in progress");
          sendJson(res, 202, { ok: true });
        },
      },
    },
  ]);
}
