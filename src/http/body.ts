/**
 * Request bodies: read with a size limit (a client cannot make us buffer
 * without bound), parsed as JSON, then decoded with io-ts so every error
 * names the field and the value it rejected.
 */
import type { IncomingMessage } from "node:http";
import type * as t from "io-ts";
import { isLeft, left, right, type Either } from "fp-ts/lib/Either.js";

/** Operator commands are small; 64 KiB is generous. Larger -> 413. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Document API requests (the embedded store's `PUT /{db}/{doc}`, `_bulk_docs`):
 * CouchDB takes documents of up to 8 MB (`max_document_size`) and requests far
 * larger; 64 MiB keeps a `_bulk_docs` of many documents possible and memory bounded.
 */
export const MAX_DOCUMENT_REQUEST_BYTES = 64 * 1024 * 1024;

export interface HttpError {
  readonly status: number;
  readonly error: string;
  readonly reason: string;
}

export const tooLarge = (limitBytes: number): HttpError => ({
  status: 413,
  error: "too_large",
  reason: `the request entity is too large (limit ${limitBytes} bytes)`,
});

/** Reads the whole body, failing with 413 as soon as it passes `limitBytes`. */
export function readBody(req: IncomingMessage, limitBytes = MAX_BODY_BYTES): Promise<Either<HttpError, Buffer>> {
  return new Promise((resolve) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (Number.isFinite(declared) && declared > limitBytes) {
      req.resume(); // drain so the connection can answer
      resolve(left(tooLarge(limitBytes)));
      return;
    }
    const parts: Buffer[] = [];
    let sizeBytes = 0;
    let done = false;
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      sizeBytes += chunk.length;
      if (sizeBytes > limitBytes) {
        done = true;
        parts.length = 0;
        resolve(left(tooLarge(limitBytes)));
        return;
      }
      parts.push(chunk);
    });
    req.on("end", () => {
      if (done) return;
      done = true;
      resolve(right(Buffer.concat(parts)));
    });
    req.on("error", (error) => {
      if (done) return;
      done = true;
      resolve(left({ status: 400, error: "bad_request", reason: `could not read the request body: ${error.message}` }));
    });
    // Closed before its end without an error (the client went away): settle, or the handler waits forever.
    req.on("close", () => {
      if (done) return;
      done = true;
      resolve(left({ status: 400, error: "bad_request", reason: "could not read the request body: the connection closed" }));
    });
  });
}

/**
 * Read and decode a JSON body. An empty body decodes as `emptyAs` (commands
 * whose fields are all optional accept no body at all).
 */
export async function readJsonBody<A>(
  req: IncomingMessage,
  codec: t.Decoder<unknown, A>,
  options: { readonly emptyAs?: unknown; readonly limitBytes?: number } = {},
): Promise<Either<HttpError, A>> {
  const raw = await readBody(req, options.limitBytes);
  if (isLeft(raw)) return raw;
  const text = raw.right.toString("utf8");
  let json: unknown;
  if (text.trim() === "" && "emptyAs" in options) {
    json = options.emptyAs;
  } else {
    try {
      json = JSON.parse(text);
    } catch (error) {
      // CouchDB says "invalid UTF-8 JSON" (fixture 91), which sends people looking for an encoding problem.
      return left({ status: 400, error: "bad_request", reason: `the request body is not JSON (${error instanceof Error ? error.message : String(error)})` });
    }
  }
  const decoded = codec.decode(json);
  if (isLeft(decoded)) return left({ status: 400, error: "bad_request", reason: describeErrors(decoded.left) });
  return right(decoded.right);
}

/** `db: expected a database name, got 42; ddoc: ...` — the field, what was wanted, the value. */
export function describeErrors(errors: t.Errors): string {
  const byField = new Map<string, string>();
  for (const error of errors) {
    const named = error.context.map((entry, index) => ({ entry, index })).filter(({ entry }) => entry.key !== "" && !/^\d+$/.test(entry.key));
    const field = named.map(({ entry }) => entry.key).join(".") || "request body";
    // The codec that owns this field (or the whole body): its name says what was expected.
    const owner = error.context[named[named.length - 1]?.index ?? 0];
    const expected = error.message ?? owner?.type.name ?? "a valid value";
    // One message per field: unions and intersections report the same value several times.
    if (!byField.has(field)) byField.set(field, `${field}: expected ${expected}, got ${showValue(error.value)}`);
  }
  return [...byField.values()].join("; ");
}

const showValue = (value: unknown): string => {
  if (value === undefined) return "nothing (the field is missing)";
  const text = jsonOf(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/**
 * JSON.stringify recurses: a client's value nested deeper than the stack
 * (a body of 20,000 `[`, which JSON.parse reads without trouble) would throw
 * RangeError out of the 400 we are writing (found by test/http/fuzz.test.ts).
 */
function jsonOf(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return `${Array.isArray(value) ? "an array" : "an object"} nested too deeply to show`;
  }
}
