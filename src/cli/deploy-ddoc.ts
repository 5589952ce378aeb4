/**
 * `upholster deploy-ddoc`: stage a new version of a design doc in a running
 * upholster, which builds its indexes in the background and swaps it in
 * when they are fresh (src/core/indexing/deploy.ts), then follow it.
 *
 * It talks to upholster over HTTP rather than to the store: upholster owns
 * the channels and priorities the build must share with every other index,
 * and keeps the deploy (persisted) when this command is interrupted or
 * upholster restarts. Running the same command again follows the same
 * deploy (same body: resumed, not restarted); `--cancel` stops it and
 * removes the stage.
 *
 * Exit codes: 0 swapped in (or cancelled with --cancel), 1 failed,
 * cancelled, refused or unreachable, 2 a bad command line or file.
 */
import { readFile } from "node:fs/promises";
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import { splitCredentials, StatusUsageError } from "./status.js";

export interface DeployFlags {
  readonly url: string;
  readonly db?: string | undefined;
  readonly file?: string | undefined;
  readonly ddoc?: string | undefined;
  readonly detach?: boolean | undefined;
  readonly cancel?: boolean | undefined;
}

export interface DeployIo {
  out(line: string): void;
  /** Between polls of the deploy's status. */
  sleep(ms: number): Promise<void>;
  readonly pollMs?: number;
}

const DeployStatusC = t.intersection([
  t.type({ db: t.string, ddoc: t.string, phase: t.string }),
  t.partial({ stage: t.string, lag: t.number, indexes: t.number, error: t.string }),
]);
type DeployStatus = t.TypeOf<typeof DeployStatusC>;

const FINISHED = new Set(["done", "failed", "cancelled"]);

/** The design doc id (`--ddoc`, else the file's `_id`). */
const targetOf = (flags: DeployFlags, doc: Record<string, unknown>): string => {
  const raw = flags.ddoc ?? (typeof doc["_id"] === "string" ? doc["_id"] : undefined);
  if (raw === undefined || raw === "" || raw === "_design/") throw new StatusUsageError("--ddoc: which design doc? (or give the file an _id)");
  return raw.startsWith("_design/") ? raw : `_design/${raw}`;
};

const readDoc = async (file: string): Promise<Record<string, unknown>> => {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new StatusUsageError(`--file: cannot read ${JSON.stringify(file)} (${error instanceof Error ? error.message : String(error)})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new StatusUsageError(`--file: ${file} is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new StatusUsageError(`--file: ${file} is not a JSON object (a design doc)`);
  return doc as Record<string, unknown>;
};

const describe = (s: DeployStatus): string => {
  const detail = [
    s.indexes !== undefined ? `${s.indexes} index${s.indexes === 1 ? "" : "es"}` : undefined,
    s.lag !== undefined ? `${s.lag} update${s.lag === 1 ? "" : "s"} behind` : undefined,
    s.error,
  ].filter((x) => x !== undefined);
  return `${s.phase}${detail.length > 0 ? `: ${detail.join(", ")}` : ""}`;
};

async function call(base: string, headers: Record<string, string>, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new Error(`cannot reach upholster at ${base} (${cause})`);
  }
  const text = await response.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // kept as text for the message
  }
  return { status: response.status, json };
}

const reasonOf = (json: unknown): string =>
  typeof json === "object" && json !== null && "reason" in json ? String((json as { reason: unknown }).reason) : JSON.stringify(json);

/** Runs the command; resolves with the exit code. Errors meant for the user are thrown with their message. */
export async function deployDdocCommand(flags: DeployFlags, io: DeployIo): Promise<number> {
  const { base, headers } = splitCredentials(flags.url);
  if (flags.db === undefined || flags.db === "") throw new StatusUsageError("--db: which database?");
  const query = (ddoc: string): string => `?db=${encodeURIComponent(flags.db!)}&ddoc=${encodeURIComponent(ddoc)}`;
  if (flags.cancel === true) {
    if (flags.ddoc === undefined) throw new StatusUsageError("--ddoc: which deploy to cancel?");
    const ddoc = targetOf(flags, {});
    const answer = await call(base, headers, "DELETE", `/_upholster/indexing/deploy${query(ddoc)}`);
    if (answer.status !== 202) throw new Error(`cancel refused (${answer.status}): ${reasonOf(answer.json)}`);
    io.out(`deploy of ${ddoc} in ${flags.db}: cancelling (the stage is being removed)`);
    return flags.detach === true ? 0 : follow(base, headers, query(ddoc), ddoc, flags, io, "cancelled");
  }
  if (flags.file === undefined) throw new StatusUsageError("--file: the design doc to deploy (a JSON file)");
  const doc = await readDoc(flags.file);
  const ddoc = targetOf(flags, doc);
  const answer = await call(base, headers, "POST", "/_upholster/indexing/deploy", { db: flags.db, ddoc, doc });
  if (answer.status === 401) throw new Error(`${base} asks for a server admin (${reasonOf(answer.json)}); pass one in the URL`);
  if (answer.status !== 202) throw new Error(`deploy refused (${answer.status}): ${reasonOf(answer.json)}`);
  const resumed = typeof answer.json === "object" && answer.json !== null && (answer.json as { resumed?: unknown }).resumed === true;
  io.out(`deploy of ${ddoc} in ${flags.db}: ${resumed ? "already in progress, following it" : "started"}`);
  if (flags.detach === true) {
    io.out(`follow it with: upholster deploy-ddoc --db ${flags.db} --file ${flags.file} (the same command)`);
    return 0;
  }
  return follow(base, headers, query(ddoc), ddoc, flags, io, "done");
}

/** Print each change of phase or lag until the deploy ends; 0 when it ends as `success`. */
async function follow(base: string, headers: Record<string, string>, query: string, ddoc: string, flags: DeployFlags, io: DeployIo, success: string): Promise<number> {
  let last = "";
  for (;;) {
    const answer = await call(base, headers, "GET", `/_upholster/indexing/deploy${query}`);
    if (answer.status !== 200) throw new Error(`no status for the deploy of ${ddoc} (${answer.status}): ${reasonOf(answer.json)}`);
    const decoded = DeployStatusC.decode(answer.json);
    if (isLeft(decoded)) throw new Error(`unexpected deploy status from ${base}: ${JSON.stringify(answer.json).slice(0, 200)}`);
    const line = describe(decoded.right);
    if (line !== last) io.out(`  ${line}`);
    last = line;
    if (FINISHED.has(decoded.right.phase)) return decoded.right.phase === success ? 0 : 1;
    await io.sleep(io.pollMs ?? 500);
  }
}
