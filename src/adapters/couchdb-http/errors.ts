/**
 * The adapter's errors. Each names the endpoint (`METHOD /path`) so a log line
 * says which call failed; none ever carries credentials (messages are built
 * from redacted parts only).
 */

/** The server answered with an error status. */
export class CouchHttpError extends Error {
  override readonly name = "CouchHttpError";
  constructor(
    readonly endpoint: string,
    readonly status: number,
    /** CouchDB's `error` field (`not_found`, `unauthorized`...), when the body had one. */
    readonly couchError: string | undefined,
    readonly reason: string | undefined,
  ) {
    super(
      `${endpoint}: HTTP ${status}${couchError === undefined ? "" : ` ${couchError}`}${
        reason === undefined ? "" : `: ${reason}`
      }${status === 401 ? " (check the credentials: server admin needed)" : ""}`,
    );
  }
}

/** The server could not be reached (refused, reset, timed out) after the retries. */
export class CouchUnavailableError extends Error {
  override readonly name = "CouchUnavailableError";
  constructor(
    readonly endpoint: string,
    readonly cause_: string,
  ) {
    super(`${endpoint}: CouchDB server unreachable: ${cause_}`);
  }
}

/** The server answered 2xx with a body of an unexpected shape. */
export class CouchDecodeError extends Error {
  override readonly name = "CouchDecodeError";
  constructor(
    readonly endpoint: string,
    readonly problems: readonly string[],
  ) {
    super(`${endpoint}: unexpected response: ${problems.slice(0, 5).join("; ")}`);
  }
}

export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));
