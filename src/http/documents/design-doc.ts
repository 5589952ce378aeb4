/**
 * The shape checks CouchDB 3.4 makes on a design doc before it is written
 * (`couch_mrview:validate_ddoc_fields`, `require_map_function_for_views`),
 * for the members views need: `language` a string, `views` an object of
 * objects, each with a `map` (a string for JavaScript) and a string
 * `reduce`. CouchDB answers 400 `invalid_design_doc` (fixture 36); in
 * `_bulk_docs` it is that doc's result (fixture 37). Whether the functions
 * compile is the view engine's business, as in CouchDB.
 */
import type { HttpError } from "./errors.js";

const invalid = (reason: string): HttpError => ({ status: 400, error: "invalid_design_doc", reason });
const mustHaveType = (path: string, type: string): HttpError => invalid(`\`${path}\` field must have ${type} type`);

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

export function designDocProblem(body: Readonly<Record<string, unknown>>): HttpError | undefined {
  const language = body["language"];
  if (language !== undefined && typeof language !== "string") return mustHaveType("language", "string");
  const views = body["views"];
  if (views === undefined) return undefined;
  if (!isObject(views)) return mustHaveType("views", "object");
  const javascript = language === undefined || language === "javascript";
  for (const [name, view] of Object.entries(views)) {
    const problem = viewProblem(name, view, javascript);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function viewProblem(name: string, view: unknown, javascript: boolean): HttpError | undefined {
  if (!isObject(view)) return mustHaveType(`views.${name}`, "object");
  if (name === "lib") return undefined;
  const map = view["map"];
  if (javascript && map !== undefined && typeof map !== "string") return mustHaveType(`views.${name}.map`, "string");
  const reduce = view["reduce"];
  if (reduce !== undefined && typeof reduce !== "string") return mustHaveType(`views.${name}.reduce`, "string");
  return map === undefined ? invalid(`View \`${name}\` must contain map function`) : undefined;
}
