/**
 * View query parameters, decoded as couch_mrview_http:parse_params does:
 *
 * - parameters apply in the order given (`key=1&startkey=0` starts at 0);
 * - keys are JSON (`key="a"`, not `key=a`): bad JSON is 400 `bad_request`
 *   "invalid UTF-8 JSON", as chttpd says it;
 * - `keys` with a single key is that `key`; `keys` that is not an array is
 *   "`keys` must be an array of strings." (CouchDB's words, though any JSON
 *   values are keys);
 * - booleans are `true`/`false` in any case, else `Invalid boolean
 *   parameter: "yes"`; counts are Erlang integers (`+5`, `007`), else
 *   `Invalid value for integer: "abc"`, or `Invalid value for positive
 *   integer: "-1"` when negative;
 * - `stale=ok` is `update=false`, `stale=update_after` is `update=lazy`;
 * - `start_key`, `end_key`, `start_key_doc_id`, `end_key_doc_id` are
 *   aliases; `stable`, `sorted`, `conflicts`, `attachments`,
 *   `att_encoding_info` are checked and otherwise ignored (one node, no
 *   attachments in views); unknown parameters are ignored.
 *
 * A POST body (`{"keys": [...], ...}`) is decoded first, its values already
 * JSON; the query string then applies over it. Never throws.
 */
import * as t from "io-ts";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";
import { DEFAULT_VIEW_QUERY, queryParseError, type ViewQuery, type ViewQueryProblem } from "./view-query.js";

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Draft = Mutable<ViewQuery>;

/** A parameter's value: text from a query string, or JSON from a POST body. */
type ParamValue = { readonly text: string } | { readonly json: unknown };

const erlangText = (value: ParamValue): string => ("text" in value ? value.text : JSON.stringify(value.json) ?? "undefined");

/** Erlang's `~p` of the string CouchDB got (close enough: JSON string syntax). */
const quoted = (value: ParamValue): string => JSON.stringify(erlangText(value));

/** `parse_boolean/1`: the literals true/false, case-insensitive. */
export const CouchBooleanC = new t.Type<boolean, string, unknown>(
  "CouchBoolean",
  (u): u is boolean => typeof u === "boolean",
  (u, c) => {
    if (typeof u === "boolean") return t.success(u);
    if (typeof u !== "string") return t.failure(u, c);
    const lower = u.toLowerCase();
    return lower === "true" ? t.success(true) : lower === "false" ? t.success(false) : t.failure(u, c);
  },
  String,
);

/** `list_to_integer/1`: an optional sign and digits (clamped to safe integers, harmlessly). */
export const ErlangIntegerC = new t.Type<number, string, unknown>(
  "ErlangInteger",
  (u): u is number => typeof u === "number" && Number.isSafeInteger(u),
  (u, c) => {
    if (typeof u === "number" && Number.isInteger(u)) return t.success(clampSafe(u));
    if (typeof u !== "string" || !/^[+-]?\d+$/.test(u)) return t.failure(u, c);
    return t.success(clampSafe(Number(u)));
  },
  String,
);

const clampSafe = (n: number): number => Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, n === 0 ? 0 : n));

const INVALID_JSON: ViewQueryProblem = { status: 400, error: "bad_request", reason: "invalid UTF-8 JSON" };

const jsonOf = (value: ParamValue): Either<ViewQueryProblem, unknown> => {
  if ("json" in value) return right(value.json);
  try {
    return right(JSON.parse(value.text) as unknown);
  } catch {
    return left(INVALID_JSON);
  }
};

const booleanOf = (value: ParamValue): Either<ViewQueryProblem, boolean> => {
  const decoded = CouchBooleanC.decode("json" in value ? value.json : value.text);
  return isLeft(decoded) ? left(queryParseError(`Invalid boolean parameter: ${quoted(value)}`)) : right(decoded.right);
};

const positiveIntOf = (value: ParamValue): Either<ViewQueryProblem, number> => {
  const decoded = ErlangIntegerC.decode("json" in value ? value.json : value.text);
  if (isLeft(decoded)) return left(queryParseError(`Invalid value for integer: ${quoted(value)}`));
  return decoded.right >= 0 ? right(decoded.right) : left(queryParseError(`Invalid value for positive integer: ${quoted(value)}`));
};

const textOf = (value: ParamValue): string => ("text" in value ? value.text : typeof value.json === "string" ? value.json : erlangText(value));

type Apply = (draft: Draft, value: ParamValue) => ViewQueryProblem | undefined;

const withJson =
  (set: (draft: Draft, json: unknown) => ViewQueryProblem | undefined): Apply =>
  (draft, value) => {
    const decoded = jsonOf(value);
    return isLeft(decoded) ? decoded.left : set(draft, decoded.right);
  };

const withBoolean =
  (set: (draft: Draft, flag: boolean) => void): Apply =>
  (draft, value) => {
    const decoded = booleanOf(value);
    if (isLeft(decoded)) return decoded.left;
    set(draft, decoded.right);
    return undefined;
  };

const withCount =
  (set: (draft: Draft, count: number) => void): Apply =>
  (draft, value) => {
    const decoded = positiveIntOf(value);
    if (isLeft(decoded)) return decoded.left;
    set(draft, decoded.right);
    return undefined;
  };

/** Only the literals CouchDB lists; anything else is `message`. */
const oneOf =
  (choices: Readonly<Record<string, (draft: Draft) => void>>, message: string): Apply =>
  (draft, value) => {
    const set = choices[textOf(value)];
    if (set === undefined) return queryParseError(message);
    set(draft);
    return undefined;
  };

/** `key` is `startkey` = `endkey`; `keys` given too stays, for validation to refuse the pair. */
const setKey = (draft: Draft, key: unknown): undefined => {
  draft.startkey = key;
  draft.endkey = key;
  return undefined;
};

const setKeys = (draft: Draft, keys: unknown): ViewQueryProblem | undefined => {
  if (!Array.isArray(keys)) return queryParseError("`keys` must be an array of strings.");
  if (keys.length === 1) return setKey(draft, keys[0]);
  draft.keys = keys;
  return undefined;
};

const ignored: Apply = () => undefined;
const checkedBoolean: Apply = withBoolean(() => undefined);

const PARAMETERS: Readonly<Record<string, Apply>> = {
  "": ignored,
  reduce: withBoolean((d, v) => void (d.reduce = v)),
  key: withJson(setKey),
  keys: withJson(setKeys),
  startkey: withJson((d, v) => void (d.startkey = v)),
  start_key: withJson((d, v) => void (d.startkey = v)),
  endkey: withJson((d, v) => void (d.endkey = v)),
  end_key: withJson((d, v) => void (d.endkey = v)),
  startkey_docid: (d, v) => void (d.startkeyDocId = textOf(v)),
  start_key_doc_id: (d, v) => void (d.startkeyDocId = textOf(v)),
  endkey_docid: (d, v) => void (d.endkeyDocId = textOf(v)),
  end_key_doc_id: (d, v) => void (d.endkeyDocId = textOf(v)),
  limit: withCount((d, v) => void (d.limit = v)),
  skip: withCount((d, v) => void (d.skip = v)),
  stale: oneOf({ ok: (d) => void (d.update = "false"), update_after: (d) => void (d.update = "lazy") }, "Invalid value for `stale`."),
  stable: oneOf({ true: () => undefined, false: () => undefined }, "Invalid value for `stable`."),
  update: oneOf({ true: (d) => void (d.update = "true"), false: (d) => void (d.update = "false"), lazy: (d) => void (d.update = "lazy") }, "Invalid value for `update`."),
  descending: withBoolean((d, v) => void (d.descending = v)),
  group: withBoolean((d, v) => void (d.group = v)),
  group_level: withCount((d, v) => void (d.groupLevel = v)),
  inclusive_end: withBoolean((d, v) => void (d.inclusiveEnd = v)),
  include_docs: withBoolean((d, v) => void (d.includeDocs = v)),
  update_seq: withBoolean((d, v) => void (d.updateSeq = v)),
  attachments: checkedBoolean,
  att_encoding_info: checkedBoolean,
  conflicts: checkedBoolean,
  sorted: checkedBoolean,
  callback: ignored,
  partition: () => queryParseError("`partition` parameter is not supported in this design doc"),
};

/** JSON `true`/`false`/numbers of a body stand for themselves; strings are taken as CouchDB takes query text. */
const bodyValue = (json: unknown): ParamValue => (typeof json === "string" ? { text: json } : { json });

const applyAll = (draft: Draft, params: Iterable<readonly [string, ParamValue]>): ViewQueryProblem | undefined => {
  for (const [name, value] of params) {
    const apply = Object.prototype.hasOwnProperty.call(PARAMETERS, name) ? PARAMETERS[name] : undefined;
    const problem = apply?.(draft, value);
    if (problem !== undefined) return problem;
  }
  return undefined;
};

/** Body keys are JSON as they are: `{"key": "a"}` is the key "a", not text to parse. */
const bodyParams = (body: Readonly<Record<string, unknown>>): [string, ParamValue][] =>
  Object.entries(body).map(([name, json]) => [name, ["key", "keys", "startkey", "start_key", "endkey", "end_key"].includes(name) ? { json } : bodyValue(json)]);

/**
 * A view query from query-string parameters (in order; `URLSearchParams`
 * works) and, for `POST .../_view/...`, the decoded JSON body.
 */
export function decodeViewQuery(
  params: Iterable<readonly [string, string]>,
  body?: Readonly<Record<string, unknown>>,
): Either<ViewQueryProblem, ViewQuery> {
  const draft: Draft = { ...DEFAULT_VIEW_QUERY };
  if (body !== undefined) {
    const problem = applyAll(draft, bodyParams(body));
    if (problem !== undefined) return left(problem);
  }
  const textParams = function* (): Generator<readonly [string, ParamValue]> {
    for (const [name, text] of params) yield [name, { text }];
  };
  const problem = applyAll(draft, textParams());
  return problem === undefined ? right(draft) : left(problem);
}
