/**
 * HTTP to one CouchDB-style server: request building, auth (basic or cookie
 * session), timeouts, retries with capped exponential back-off and jitter, and
 * reachability tracking. Everything above it speaks in paths and decoded bodies.
 *
 * Retried: connection errors (refused, reset, DNS, TLS), timeouts, 5xx, 429.
 * Not retried: every other 4xx (a retry cannot fix a bad request or a missing db).
 */
import { Agent, request, type Dispatcher } from "undici";
import type { Logger, Scheduler } from "../../ports/shell.js";
import { backoffDelayMs, type BackoffPolicy } from "./backoff.js";
import { decodeBody, ErrorBody, Session } from "./decoders.js";
import { CouchHttpError, CouchUnavailableError, errorMessage } from "./errors.js";
import { Health } from "./health.js";
import { redactText, redactUrl } from "./redact.js";
import { sleep } from "./timers.js";

export interface RetryOptions extends BackoffPolicy {
  /** Retries after the first try (0 = no retry). */
  readonly retries: number;
}

export const defaultRetry: RetryOptions = { retries: 4, baseMs: 100, capMs: 5_000 };

export type CouchAuth =
  | { readonly username: string; readonly password: string; readonly session?: false | undefined }
  /** Cookie session: `POST /_session` once, `Cookie: AuthSession=...` after, log in again on a 401. */
  | { readonly username: string; readonly password: string; readonly session: true }
  /** A ready-made `AuthSession` cookie value (not refreshed: a 401 is final). */
  | { readonly cookie: string };

export interface ClientOptions {
  /** Base URL, may carry `user:pass@` and a path prefix. */
  readonly url: string;
  readonly auth?: CouchAuth | undefined;
  /** PEM CA certificate(s) for https with a private CA. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer> | undefined;
  readonly logger: Logger;
  readonly scheduler: Scheduler;
  readonly random?: (() => number) | undefined;
  readonly requestTimeoutMs?: number | undefined;
  readonly retry?: Partial<RetryOptions> | undefined;
}

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestSpec {
  readonly method: "GET" | "HEAD" | "POST" | "PUT" | "DELETE";
  /** Already encoded path below the base URL, starting with `/`. */
  readonly path: string;
  readonly query?: Query | undefined;
  /** JSON body; `Content-Type: application/json` is sent when there is one or when `json` is set. */
  readonly body?: unknown;
  /** Send `Content-Type: application/json` even without a body (`_compact` answers 415 otherwise). */
  readonly json?: boolean | undefined;
  /** Error statuses returned to the caller instead of thrown (e.g. 404 for "missing"). */
  readonly accept?: readonly number[] | undefined;
}

export interface Response {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** Counters for the closing note's measurements (requests per db update). */
export interface ClientStats {
  requests: number;
  retries: number;
}

const isRetryableStatus = (status: number): boolean => status >= 500 || status === 429;

export const endpointOf = (method: string, path: string): string => {
  const bare = path.split("?")[0] ?? path;
  return `${method} ${bare}`;
};

export class CouchClient {
  readonly baseUrl: string;
  /** The base URL without credentials, for logs and status. */
  readonly label: string;
  readonly health: Health;
  readonly stats: ClientStats = { requests: 0, retries: 0 };
  private readonly prefix: string;
  private readonly origin: string;
  private readonly dispatcher: Agent;
  private readonly secrets: string[] = [];
  private readonly retry: RetryOptions;
  private readonly timeoutMs: number;
  private readonly random: () => number;
  private readonly auth: CouchAuth | undefined;
  private cookie: string | undefined;
  private login: Promise<void> | undefined;

  constructor(private readonly options: ClientOptions) {
    const parsed = new URL(options.url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new Error(`couch url: expected http: or https:, got ${JSON.stringify(parsed.protocol)}`);
    }
    const urlUser = decodeURIComponent(parsed.username);
    const urlPass = decodeURIComponent(parsed.password);
    this.auth = options.auth ?? (urlUser !== "" ? { username: urlUser, password: urlPass } : undefined);
    if (this.auth !== undefined) {
      if ("cookie" in this.auth) this.secrets.push(this.auth.cookie);
      else this.secrets.push(this.auth.password, Buffer.from(`${this.auth.username}:${this.auth.password}`).toString("base64"));
    }
    if (urlPass !== "") this.secrets.push(urlPass, parsed.password);
    if (this.auth !== undefined && "cookie" in this.auth) this.cookie = this.auth.cookie;
    this.origin = parsed.origin;
    this.prefix = parsed.pathname.replace(/\/+$/, "");
    this.baseUrl = `${this.origin}${this.prefix}`;
    this.label = redactUrl(this.baseUrl);
    this.retry = { ...defaultRetry, ...options.retry };
    this.timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.random = options.random ?? Math.random;
    this.dispatcher = new Agent({
      keepAliveTimeout: 30_000,
      connections: 16,
      connect: options.ca === undefined ? {} : { ca: options.ca as string | Buffer | Array<string | Buffer> },
    });
    this.health = new Health(options.logger, this.label, options.scheduler.nowMs());
  }

  /** Redact anything that might carry a credential. */
  redact(text: string): string {
    return redactText(text, this.secrets);
  }

  urlFor(path: string, query?: Query): string {
    let url = `${this.baseUrl}${path}`;
    if (query !== undefined) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
      const qs = params.toString();
      if (qs !== "") url += `?${qs}`;
    }
    return url;
  }

  private authHeaders(): Record<string, string> {
    if (this.cookie !== undefined) return { cookie: `AuthSession=${this.cookie}` };
    const auth = this.auth;
    if (auth === undefined || "cookie" in auth || auth.session === true) return {};
    return { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}` };
  }

  private async ensureSession(force: boolean): Promise<void> {
    const auth = this.auth;
    if (auth === undefined || "cookie" in auth || auth.session !== true) return;
    if (this.cookie !== undefined && !force) return;
    this.login ??= (async () => {
      try {
        const res = await this.send({ method: "POST", path: "/_session", body: { name: auth.username, password: auth.password } });
        if (res.status !== 200) throw this.httpError("POST /_session", res);
        decodeBody(Session, res.body, "POST /_session");
        const setCookie = res.headers["set-cookie"];
        const all = Array.isArray(setCookie) ? setCookie : setCookie === undefined ? [] : [setCookie];
        const value = all.map((c) => /AuthSession=([^;]*)/.exec(c)?.[1]).find((v) => v !== undefined && v !== "");
        if (value === undefined) throw new CouchHttpError("POST /_session", res.status, "no_cookie", "no AuthSession cookie in the answer");
        this.cookie = value;
        this.secrets.push(value);
      } finally {
        this.login = undefined;
      }
    })();
    await this.login;
  }

  /** One try, no retry: status and parsed body, or a thrown connection error. */
  private async send(spec: RequestSpec): Promise<Response> {
    const hasBody = spec.body !== undefined;
    const headers: Record<string, string> = { accept: "application/json", ...this.authHeaders() };
    if (hasBody || spec.json === true) headers["content-type"] = "application/json";
    this.stats.requests += 1;
    const res = await request(this.urlFor(spec.path, spec.query), {
      method: spec.method,
      headers,
      body: hasBody ? JSON.stringify(spec.body) : undefined,
      dispatcher: this.dispatcher,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = spec.method === "HEAD" ? "" : await res.body.text();
    let body: unknown = null;
    if (text.trim() !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    return { status: res.statusCode, body, headers: res.headers };
  }

  private httpError(endpoint: string, res: Response): CouchHttpError {
    const decoded = ErrorBody.decode(res.body);
    const err = decoded._tag === "Right" ? decoded.right.error : undefined;
    const reason = decoded._tag === "Right" && typeof decoded.right.reason === "string" ? decoded.right.reason : undefined;
    return new CouchHttpError(endpoint, res.status, err, reason === undefined ? undefined : this.redact(reason));
  }

  /**
   * Send with retries. Resolves 2xx and `accept`ed statuses; rejects with
   * `CouchHttpError` (other statuses) or `CouchUnavailableError` (unreachable).
   */
  async call(spec: RequestSpec): Promise<Response> {
    const endpoint = endpointOf(spec.method, spec.path);
    let reloggedIn = false;
    for (let attempt = 0; ; attempt++) {
      let failure: string;
      try {
        await this.ensureSession(false);
        const res = await this.send(spec);
        this.health.markUp(this.options.scheduler.nowMs());
        if (res.status === 401 && !reloggedIn && this.auth !== undefined && !("cookie" in this.auth) && this.auth.session === true) {
          // The session cookie expired: log in again once.
          reloggedIn = true;
          this.cookie = undefined;
          await this.ensureSession(true);
          attempt -= 1;
          continue;
        }
        if ((res.status >= 200 && res.status < 300) || res.status === 304 || spec.accept?.includes(res.status) === true) return res;
        if (!isRetryableStatus(res.status)) throw this.httpError(endpoint, res);
        failure = this.httpError(endpoint, res).message;
        if (attempt >= this.retry.retries) throw this.httpError(endpoint, res);
      } catch (e) {
        if (e instanceof CouchHttpError) throw e;
        failure = this.redact(describeConnectionError(e));
        if (attempt >= this.retry.retries) {
          this.health.markDown(this.options.scheduler.nowMs(), failure);
          throw new CouchUnavailableError(endpoint, failure);
        }
      }
      this.stats.retries += 1;
      const delayMs = backoffDelayMs(attempt, this.retry, this.random);
      this.options.logger.debug({ endpoint, attempt: attempt + 1, delayMs, error: failure }, "retrying CouchDB request");
      await sleep(this.options.scheduler, delayMs);
    }
  }

  /**
   * Open a streaming response (the continuous `_db_updates` feed): no retry
   * (the follower reconnects), no overall timeout, `idleTimeoutMs` between chunks.
   */
  async stream(path: string, query: Query, idleTimeoutMs: number, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    await this.ensureSession(false);
    this.stats.requests += 1;
    return request(this.urlFor(path, query), {
      method: "GET",
      headers: { accept: "application/json", ...this.authHeaders() },
      dispatcher: this.dispatcher,
      // CouchDB sends no headers on a continuous feed until it has a row or a heartbeat (fixtures 76, 78).
      headersTimeout: idleTimeoutMs,
      bodyTimeout: idleTimeoutMs,
      signal,
    });
  }

  /** A failed login or 401 after the session refresh is final. */
  errorFor(endpoint: string, res: Response): CouchHttpError {
    return this.httpError(endpoint, res);
  }

  async close(): Promise<void> {
    await this.dispatcher.close().catch(() => undefined);
  }
}

/** `ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`... without any URL in it. */
export const describeConnectionError = (e: unknown): string => {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code ?? (e.cause as { code?: unknown } | undefined)?.code;
    const name = e.name === "TimeoutError" || e.name === "AbortError" ? "timeout" : undefined;
    const parts = [typeof code === "string" ? code : undefined, name, errorMessage(e)].filter((p) => p !== undefined);
    return parts.join(": ");
  }
  return String(e);
};
