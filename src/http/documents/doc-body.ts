/**
 * A document to write (PUT, POST, `_bulk_docs`), checked as CouchDB 3.4's
 * `couch_doc:from_json_obj_validate` checks it, with its errors (fixtures
 * 20-23, 40, 42): a JSON object; `_id` a string; `_rev` `N-...`;
 * `_deleted` a boolean; no other `_` member but those CouchDB knows.
 *
 * Differences, on purpose: `_attachments` is refused (the embedded store
 * keeps no attachments; storing the stubs as data would be worse), and
 * `_revisions`, `_revs_info`, `_conflicts`, `_deleted_conflicts` and
 * `_local_seq` are dropped (with `new_edits=true` only, there is no
 * revision history to graft).
 */
import * as t from "io-ts";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import type { DocWrite } from "./document-api.js";
import { INVALID_REV, NOT_AN_OBJECT, notSupported, type HttpError } from "./errors.js";

export interface DocumentInput {
  readonly id?: string | undefined;
  readonly rev?: string | undefined;
  readonly deleted: boolean;
  /** The members that are not special (`_id`, `_rev`, ...), plus `_access`, which CouchDB 3.4 keeps. */
  readonly body: Readonly<Record<string, unknown>>;
}

/** CouchDB's `parse_rev`: a generation, a dash, an opaque rest. */
export const RevText = new t.Type<string, string, unknown>(
  "a revision (N-...)",
  (u): u is string => typeof u === "string" && /^\d+-.+$/s.test(u),
  (u, c) => (typeof u === "string" && /^\d+-.+$/s.test(u) ? t.success(u) : t.failure(u, c)),
  (a) => a,
);

const DocObject = t.UnknownRecord;
const DROPPED = new Set(["_revisions", "_revs_info", "_conflicts", "_deleted_conflicts", "_local_seq"]);
const KEPT = new Set(["_access"]);

const illegalDocId = (reason: string): HttpError => ({ status: 400, error: "illegal_docid", reason });
const badSpecialMember = (name: string): HttpError => ({ status: 400, error: "doc_validation", reason: `Bad special document member: ${name}` });

/** CouchDB's rules for an id a client may write (`couch_doc:validate_docid/1`). */
export function docIdProblem(id: string): HttpError | undefined {
  if (id === "") return illegalDocId("Document id must not be empty");
  if (id === "_local/") return { status: 400, error: "bad_request", reason: "Invalid _local document id." };
  if (/^_(design|local)\/./s.test(id) || !id.startsWith("_")) return undefined;
  return illegalDocId("Only reserved document ids may start with underscore.");
}

export function decodeDocument(value: unknown): Either<HttpError, DocumentInput> {
  const decoded = DocObject.decode(value);
  if (isLeft(decoded)) return left(NOT_AN_OBJECT);
  const body: Record<string, unknown> = {};
  const specials: { id?: string; rev?: string; deleted: boolean } = { deleted: false };
  for (const [name, member] of Object.entries(decoded.right)) {
    if (!name.startsWith("_") || KEPT.has(name)) body[name] = member;
    else {
      const problem = takeSpecial(specials, name, member);
      if (problem !== undefined) return left(problem);
    }
  }
  const idProblem = specials.id === undefined ? undefined : docIdProblem(specials.id);
  return idProblem === undefined ? right({ ...specials, body }) : left(idProblem);
}

function takeSpecial(specials: { id?: string; rev?: string; deleted: boolean }, name: string, value: unknown): HttpError | undefined {
  switch (name) {
    case "_id":
      if (!t.string.is(value)) return illegalDocId("Document id must be a string");
      specials.id = value;
      return undefined;
    case "_rev":
      if (!RevText.is(value)) return INVALID_REV;
      specials.rev = value;
      return undefined;
    case "_deleted":
      if (!t.boolean.is(value)) return badSpecialMember(name);
      specials.deleted = value;
      return undefined;
    case "_attachments":
      return notSupported("_attachments");
    default:
      return DROPPED.has(name) ? undefined : badSpecialMember(name);
  }
}

/** What the store is asked to write: the body with `_id`, `_rev` and `_deleted` back in. */
export function toDocWrite(id: string, rev: string | undefined, input: DocumentInput): DocWrite {
  return { ...input.body, _id: id, ...(rev === undefined ? {} : { _rev: rev }), ...(input.deleted ? { _deleted: true } : {}) };
}
