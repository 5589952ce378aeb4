/**
 * What every answer must be, whatever was asked: never a 5xx (the store is
 * never down here, so even a 503 is a bug); a 4xx carries CouchDB's body,
 * a JSON object with string `error` and `reason` (a HEAD answer has no body);
 * and a 2xx only for a path that names a route.
 */
import { namesARoute } from "./routes.js";

export interface Answer {
  readonly status: number;
  /** Undefined when the body was not read to its end (a cut stream, HEAD): then it is not judged. */
  readonly body: string | undefined;
  /** The request target, when the answer is known to be for it (not for raw bytes). */
  readonly target?: string | undefined;
}

/** What one exchange came to: the statuses it got back, and what was wrong, if anything. */
export interface Outcome {
  readonly statuses: readonly number[];
  readonly problem?: string | undefined;
}

export function problemWith(answer: Answer): string | undefined {
  if (answer.status >= 500) return `a ${answer.status} (${shorten(answer.body)})`;
  if (answer.status >= 400 && answer.body !== undefined && !isCouchError(answer.body)) {
    return `a ${answer.status} whose body is not CouchDB's {"error","reason"}: ${shorten(answer.body)}`;
  }
  if (answer.status >= 200 && answer.status < 300 && answer.target !== undefined && !namesARoute(answer.target)) {
    return `a ${answer.status} for a path that names no route`;
  }
  return undefined;
}

function isCouchError(body: string): boolean {
  try {
    const json: unknown = JSON.parse(body);
    if (typeof json !== "object" || json === null) return false;
    const { error, reason } = json as { error?: unknown; reason?: unknown };
    return typeof error === "string" && typeof reason === "string";
  } catch {
    return false;
  }
}

const shorten = (body: string | undefined): string =>
  body === undefined ? "body unread" : JSON.stringify(body.length > 200 ? `${body.slice(0, 200)}...` : body);
