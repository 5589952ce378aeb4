/**
 * What the fuzzer sends, as plain data: printed as is when it finds a
 * problem, so the offending request can be read (and replayed) from the
 * failure message alone.
 */

/** A request an ordinary HTTP client can send (undici), possibly cut short. */
export interface ClientRequest {
  readonly kind: "client";
  readonly method: string;
  /** Origin-form target: path and query, sent verbatim. */
  readonly target: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** Latin-1 bytes (binary safe); absent: no body. */
  readonly body?: string | undefined;
  /** Send the body as `Transfer-Encoding: chunked` in this many pieces instead of with a Content-Length. */
  readonly chunks?: number | undefined;
  /** Abort this long after sending: a connection cut mid-response (or mid-upload). */
  readonly cutAfterMs?: number | undefined;
}

/** Bytes on a raw socket: what no well-behaved client sends. */
export interface RawExchange {
  readonly kind: "raw";
  /** Which malformation this is (the failure message names it). */
  readonly label: string;
  /** Latin-1 strings written in order, `pauseMs` apart. */
  readonly writes: readonly string[];
  readonly pauseMs: number;
  /**
   * `end`: half-close after the last write and read until the server closes
   * (it must, having answered what it could); `cut`: destroy the socket this
   * long after the last write, whatever arrived by then is checked.
   */
  readonly finish: { readonly kind: "end" } | { readonly kind: "cut"; readonly afterMs: number };
  /** Methods of the requests in `writes`, in order: HEAD responses have no body. */
  readonly methods: readonly string[];
}

export type FuzzExchange = ClientRequest | RawExchange;

/** Long strings (huge headers, bodies) are shown by their ends and length: the index replays the exact bytes. */
const abbreviate = (_key: string, value: unknown): unknown =>
  typeof value === "string" && value.length > 300 ? `${value.slice(0, 120)}...(${value.length} chars)...${value.slice(-60)}` : value;

/** One line a person can read; `JSON.stringify` keeps control bytes visible. */
export const describeExchange = (exchange: FuzzExchange): string => JSON.stringify(exchange, abbreviate);
