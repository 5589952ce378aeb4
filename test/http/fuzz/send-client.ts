/**
 * Sends a well-formed request with undici, the target verbatim (its
 * dispatcher API does not normalize paths, so `//`, `..` and `%2e` reach the
 * server as written). Feeds that stream, and requests the fuzzer cuts, are
 * aborted after a moment; anything else must be answered completely.
 */
import { Readable } from "node:stream";
import type { Agent, Dispatcher } from "undici";
import type { ClientRequest } from "./exchanges.js";
import { problemWith, type Answer, type Outcome } from "./oracle.js";
import { readTarget } from "./routes.js";
import { MAX_BODY_BYTES } from "../../../src/http/body.js";

/** Long enough for any honest answer on a busy machine: only a server that never answers reaches it. */
export const HANG_MS = 60_000;
/** How long a streaming feed (or a request the fuzzer cuts) is given before the client hangs up. */
const STREAM_PATIENCE_MS = 150;

const STREAMING_FEEDS = new Set(["longpoll", "continuous", "eventsource"]);

/** `/_db_updates` with a feed that may hold the response open: its end is not waited for. */
export function streams(target: string): boolean {
  const url = readTarget(target);
  return url.pathname === "/_db_updates" && STREAMING_FEEDS.has(url.searchParams.get("feed") ?? "");
}

function bodyOf(request: ClientRequest): Dispatcher.DispatchOptions["body"] {
  if (request.body === undefined) return undefined;
  const bytes = Buffer.from(request.body, "latin1");
  if (request.chunks === undefined) return bytes;
  const size = Math.ceil(bytes.length / request.chunks);
  // A stream has no length: undici sends it chunked.
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
  return Readable.from(pieces);
}

/** The server may hang up on an upload it refused (413 with `Connection: close`) before the client reads the answer. */
const mayBeHungUpOn = (request: ClientRequest): boolean =>
  request.body !== undefined && request.chunks === undefined && Buffer.byteLength(request.body, "latin1") > MAX_BODY_BYTES;

export async function sendClient(agent: Agent, origin: string, request: ClientRequest): Promise<Outcome> {
  const abort = new AbortController();
  const cut = request.cutAfterMs !== undefined || streams(request.target);
  const patience = setTimeout(() => abort.abort(), request.cutAfterMs ?? (cut ? STREAM_PATIENCE_MS : HANG_MS));
  try {
    const flatHeaders = request.headers.flatMap(([name, value]) => [name, value]);
    const response = await agent.request({ origin, path: request.target, method: request.method as Dispatcher.HttpMethod, headers: flatHeaders, body: bodyOf(request), signal: abort.signal });
    const judged = response.statusCode >= 400 || !cut;
    const text = judged && request.method !== "HEAD" ? await response.body.text() : undefined;
    if (text === undefined) response.body.on("error", () => undefined).destroy();
    const answer: Answer = { status: response.statusCode, body: text, target: request.target };
    return { statuses: [answer.status], problem: problemWith(answer) };
  } catch (error) {
    if ((abort.signal.aborted && cut) || mayBeHungUpOn(request)) return { statuses: [] };
    if (abort.signal.aborted) return { statuses: [], problem: `no answer within ${HANG_MS} ms (a hang)` };
    return { statuses: [], problem: `no complete answer: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}` };
  } finally {
    clearTimeout(patience);
  }
}
