/**
 * `upholster status`: read `/_smoosh/status` from a running upholster (or a
 * CouchDB 3.4 node: same shape at `/_node/_local/_smoosh/status`) and print
 * the channels as a table. The response is decoded, not trusted.
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import { describeErrors } from "../http/body.js";
import { renderTable } from "./table.js";
import { renderIndexingStatus } from "./indexing-status.js";
import { renderServerDaemons } from "./server-daemons-status.js";

const Count = t.number;
const SmooshStatusBodyC = t.type({
  channels: t.record(
    t.string,
    t.type({ active: Count, starting: Count, waiting: t.type({ size: Count, min: Count, max: Count }) }),
  ),
});

/** The command line itself is wrong (`--url` is not a URL): exit 2, not 1. */
export class StatusUsageError extends Error {
  override readonly name = "StatusUsageError";
}

export interface StatusOptions {
  readonly url: string;
  readonly json?: boolean;
}

/** fetch() refuses URLs with user:password; move them into a Basic Authorization header. */
export function splitCredentials(url: string): { base: string; headers: Record<string, string> } {
  const headers: Record<string, string> = { Accept: "application/json" };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StatusUsageError(`--url: not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.username !== "" || parsed.password !== "") {
    const user = decodeURIComponent(parsed.username);
    const password = decodeURIComponent(parsed.password);
    headers.Authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
    parsed.username = "";
    parsed.password = "";
  }
  return { base: parsed.toString().replace(/\/+$/, ""), headers };
}

const withCredentialsHint = (base: string): string => {
  const url = new URL(base);
  return `${url.protocol}//NAME:PASSWORD@${url.host}${url.pathname === "/" ? "" : url.pathname}`;
};

/** Returns the text to print, or throws an Error whose message is for the user. */
export async function fetchStatusText(options: StatusOptions): Promise<string> {
  const { base, headers } = splitCredentials(options.url);
  let response: Response;
  try {
    // CouchDB's path, which upholster also serves, so the command works against either.
    response = await fetch(`${base}/_node/_local/_smoosh/status`, { headers });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new Error(`cannot reach upholster at ${base} (${cause})`);
  }
  const text = await response.text();
  if (response.status === 401) throw new Error(`${base} asks for a server admin (${text.trim()}); pass one in the URL: --url ${withCredentialsHint(base)}`);
  if (!response.ok) throw new Error(`${base}/_node/_local/_smoosh/status answered ${response.status}: ${text.trim()}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${base}/_node/_local/_smoosh/status did not answer JSON: ${text.slice(0, 200)}`);
  }
  const decoded = SmooshStatusBodyC.decode(json);
  if (isLeft(decoded)) throw new Error(`unexpected status from ${base}: ${describeErrors(decoded.left)}`);
  if (options.json === true) return JSON.stringify(decoded.right, null, 2);
  const rows = Object.entries(decoded.right.channels).map(([name, c]) => [name, c.active, c.starting, c.waiting.size, c.waiting.min, c.waiting.max]);
  const upholsterStatus = await fetchUpholsterStatus(base, headers);
  const sections = [renderIndexingStatus(upholsterStatus), renderServerDaemons(upholsterStatus)].filter((text) => text !== undefined);
  return [renderTable(["channel", "active", "starting", "waiting", "min", "max"], rows), ...sections.flatMap((text) => ["", text])].join("\n");
}

/** upholster's own status, when the server is an upholster (CouchDB has no `/_upholster/status`: undefined, and nothing more is printed). */
async function fetchUpholsterStatus(base: string, headers: Record<string, string>): Promise<unknown> {
  try {
    const response = await fetch(`${base}/_upholster/status`, { headers });
    return response.ok ? await response.json() : undefined;
  } catch {
    return undefined;
  }
}
