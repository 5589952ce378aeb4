/**
 * Requests a real client sends. Half are aimed at a known route (its
 * method, mostly the admin's credentials, its own body and parameters, each
 * sometimes wrong), half scattershot (any method, path, credentials, body).
 * Credentials: the admin's, wrong, unknown, malformed, cookies good and bad;
 * assorted headers; bodies (bodies.ts) sent with a Content-Length or
 * chunked; a tenth cut off after a moment.
 */
import fc from "fast-check";
import type { ClientRequest } from "./exchanges.js";
import { aimedPath, feedQuery, requestPath, requestQuery } from "./paths.js";
import { anyBody, bodyFor } from "./bodies.js";
import { KNOWN_ROUTES } from "./routes.js";

export interface Credentials {
  readonly name: string;
  readonly password: string;
  /** A valid `AuthSession=...` for the admin, where the server issues cookies. */
  readonly cookie?: string | undefined;
}

const basic = (userPass: string): string => `Basic ${Buffer.from(userPass, "latin1").toString("base64")}`;

/** The admin's Basic credentials, or (where the server issues them) its session cookie. */
const adminAuthorization = (admin: Credentials): fc.Arbitrary<ReadonlyArray<readonly [string, string]>> =>
  fc.constantFrom<ReadonlyArray<readonly [string, string]>>(
    [["authorization", basic(`${admin.name}:${admin.password}`)]],
    admin.cookie === undefined ? [["authorization", basic(`${admin.name}:${admin.password}`)]] : [["cookie", admin.cookie]],
  );

/** No credentials, the admin's, wrong ones, malformed ones, cookies good and bad. */
const authorization = (admin: Credentials): fc.Arbitrary<ReadonlyArray<readonly [string, string]>> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant([]) },
    { weight: 5, arbitrary: fc.constant([["authorization", basic(`${admin.name}:${admin.password}`)] as const]) },
    {
      weight: 3,
      arbitrary: fc
        .oneof(
          fc.constant(basic(`${admin.name}:wrong`)),
          fc.constant(basic(`nobody:${admin.password}`)),
          fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })).map(([n, p]) => basic(`${n}:${p}`)),
          fc.constantFrom("Basic", "Basic ", "Basic !!!", "Basic Zm9v", "basic YWRtaW46", "Bearer abc.def.ghi", "Digest username=x", `Basic ${"A".repeat(4_000)}`, "Basic \u00e9\u00ff", " Basic YWRtaW46eA== "),
        )
        .map((value) => [["authorization", value] as const]),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.constant(admin.cookie ?? "AuthSession=YWRtaW46NUY1RTEwMDA6.abc"),
          fc.constantFrom("AuthSession=", "AuthSession=garbage", "AuthSession=YWRtaW46NUY1RTEwMDA6.abc", "a=b; AuthSession", "AuthSession=.;AuthSession=x", "=; ;==", "AuthSession=\u00e9", `AuthSession=${"A".repeat(6_000)}.x`),
          fc.base64String({ maxLength: 60 }).map((b) => `AuthSession=${b}`),
        )
        .map((value) => [["cookie", value] as const]),
    },
  );

/** Header values undici accepts (no CR, LF, NUL): printable ASCII and Latin-1. */
const headerValue = fc.oneof(
  fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")),
  fc.constantFrom("", " ", "\u00e9t\u00e9", "*", "W/\"x\"", "\"abc\"", "x".repeat(8_000)),
);

const otherHeaders: fc.Arbitrary<ReadonlyArray<readonly [string, string]>> = fc.array(
  fc.oneof(
    fc.constantFrom("content-type", "accept", "if-none-match", "last-event-id", "x-forwarded-for", "origin", "range", "content-encoding").chain((name) =>
      fc.oneof(
        fc.constantFrom("application/json", "application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x", "application/json; charset=utf-16", "*/*"),
        headerValue,
      ).map((value) => [name, value] as const),
    ),
    fc.tuple(fc.stringMatching(/^x-[a-z0-9-]{1,12}$/), headerValue),
  ),
  { maxLength: 4 },
);

const METHODS = ["GET", "GET", "GET", "POST", "POST", "POST", "PUT", "DELETE", "HEAD", "HEAD", "OPTIONS", "PATCH", "TRACE", "COPY", "PROPFIND", "PURGE", "SEARCH", "M-SEARCH"];

interface Parts {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly auth: ReadonlyArray<readonly [string, string]>;
  readonly other: ReadonlyArray<readonly [string, string]>;
  readonly body: string | undefined;
  readonly chunks: number | undefined;
  readonly cutAfterMs: number | undefined;
}

const sendingParts = {
  other: otherHeaders,
  chunks: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined, freq: 4 }),
  cutAfterMs: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined, freq: 10 }),
};

const toRequest = ({ method, path, query, auth, other, body, chunks, cutAfterMs }: Parts): ClientRequest => ({
  kind: "client",
  method,
  target: `${path}${query}`,
  headers: [...auth, ...other],
  // GET and HEAD with a body are legal HTTP, but clients refuse to send them; other methods carry it.
  body: method === "GET" || method === "HEAD" ? undefined : body,
  chunks: body === undefined ? undefined : chunks,
  cutAfterMs,
});

/** What a client says it sends: a form for `name=...`, else JSON. */
const contentTypeOf = (body: string | undefined): ReadonlyArray<readonly [string, string]> =>
  body === undefined ? [] : [["content-type", /^[a-z]+=/.test(body) ? "application/x-www-form-urlencoded" : "application/json"]];

/** At a known route: mostly its own method, the admin's credentials, its own body and parameters. */
const aimedRequest = (admin: Credentials): fc.Arbitrary<ClientRequest> =>
  fc.constantFrom(...KNOWN_ROUTES).chain((route) =>
    fc
      .record({
        method: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...route.methods) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        path: aimedPath(route),
        query: route.feedQuery === true ? feedQuery : requestQuery,
        auth: fc.oneof({ weight: 2, arbitrary: adminAuthorization(admin) }, { weight: 1, arbitrary: authorization(admin) }),
        body: bodyFor(route.body),
        ...sendingParts,
      })
      .map((parts) => toRequest({ ...parts, other: [...contentTypeOf(parts.body), ...parts.other] })),
  );

/** Anything anywhere: any method, path, credentials and body. */
const scattershotRequest = (admin: Credentials): fc.Arbitrary<ClientRequest> =>
  fc
    .record({ method: fc.constantFrom(...METHODS), path: requestPath, query: requestQuery, auth: authorization(admin), body: anyBody, ...sendingParts })
    .map(toRequest);

export const clientRequest = (admin: Credentials): fc.Arbitrary<ClientRequest> => fc.oneof(aimedRequest(admin), scattershotRequest(admin));
