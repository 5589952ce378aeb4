/**
 * What only a raw socket sends: bad request lines, bad header syntax, huge
 * headers, bodies shorter or longer than their Content-Length, chunked
 * garbage, pipelined and smuggled requests, odd `Expect`/`Upgrade`, requests
 * cut at any byte, responses cut mid-stream, and slowloris dribbles closed
 * after a moment.
 */
import fc from "fast-check";
import type { RawExchange } from "./exchanges.js";
import { requestPath } from "./paths.js";

const CRLF = "\r\n";

const endWith = (label: string, writes: string[], methods: string[], pauseMs = 0): RawExchange => ({ kind: "raw", label, writes, pauseMs, finish: { kind: "end" }, methods });

const head = (requestLine: string, headers: readonly string[]): string => `${requestLine}${CRLF}${headers.map((h) => `${h}${CRLF}`).join("")}${CRLF}`;

const requestLine = (method: string, path: string): string => `${method} ${path} HTTP/1.1`;

/** A complete, valid request (admin's credentials or none), to build on. */
const validRequest = (auth: string): fc.Arbitrary<{ method: string; text: string }> =>
  fc
    .tuple(fc.constantFrom("GET", "POST", "HEAD", "DELETE"), requestPath, fc.boolean(), fc.constantFrom("", "{\"db\":\"grown\"}", "{}", "{\"scope\":\"dbs\"}"))
    .map(([method, path, withAuth, body]) => ({
      method,
      text:
        head(requestLine(method, path), ["Host: upholster", ...(withAuth ? [`Authorization: ${auth}`] : []), ...(body === "" ? [] : ["Content-Type: application/json", `Content-Length: ${body.length}`])]) + body,
    }));

const badRequestLine = fc
  .oneof(
    fc.constantFrom(
      "GET",
      "GET /",
      "GET / HTTP/9.9",
      "GET / HTTP/1.1 extra",
      "GET / HTTP/2.0",
      "GET / HTTP/1.10",
      "GET / http/1.1",
      "get / HTTP/1.1",
      "G\u0000T / HTTP/1.1",
      "GET /\u007f HTTP/1.1",
      "GET /a b HTTP/1.1",
      "GET  / HTTP/1.1",
      "GET\t/\tHTTP/1.1",
      "FROB / HTTP/1.1",
      "GET /\u00c3\u00a9t\u00c3\u00a9 HTTP/1.1",
      "GET http://evil.example/_up HTTP/1.1",
      "GET //_up HTTP/1.1",
      "GET _up HTTP/1.1",
      "OPTIONS * HTTP/1.1",
      "CONNECT upholster:443 HTTP/1.1",
      "PRI * HTTP/2.0",
      "\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003",
      "",
      " GET / HTTP/1.1",
    ),
    fc.string({ unit: "binary-ascii", maxLength: 60 }),
  )
  .map((line) => endWith("bad request line", [head(line, ["Host: upholster", "Connection: close"])], ["GET"]));

const badHeaderLines = fc.constantFrom(
  ["NoColonHere"],
  [" Leading: space"],
  ["Bad Name: x"],
  ["X-Nul: a\u0000b"],
  ["X-Cr: a\rb"],
  ["X-Bell: \u0007"],
  ["Content-Length: abc"],
  ["Content-Length: -1"],
  ["Content-Length: 1, 2"],
  ["Content-Length: 1", "Content-Length: 2"],
  ["Content-Length: 3", "Transfer-Encoding: chunked"],
  ["Transfer-Encoding: gzip"],
  ["Transfer-Encoding: chunked, identity"],
  ["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"],
  ["Host: a", "Host: b"],
  [":"],
  ["X-Folded: a", " continued"],
  ["Content-Length: 99999999999999999999"],
  ["Expect: the-unexpected"],
  ["Expect: 100-continue", "Content-Length: 2"],
  ["Connection: Upgrade", "Upgrade: websocket"],
  ["Connection: Upgrade", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"],
  ["Authorization: Basic \u00ff\u00fe\u00e9"],
  ["Authorization: Basic YWRtaW46\u0080"],
  ["Cookie: AuthSession=\u00e9\u00e9"],
  ["Authorization: Basic YQ==", "Authorization: Basic Yg=="],
  ["Cookie: a=1", "Cookie: AuthSession=x"],
  ["Authorization:"],
  ["Content-Type: application/x-www-form-urlencoded", "Content-Length: 2"],
);

const badHeaders = fc
  .tuple(requestPath, badHeaderLines, fc.boolean())
  .map(([path, lines, withHost]) =>
    endWith("bad header syntax", [head(requestLine("POST", path), [...(withHost ? ["Host: upholster"] : []), ...lines, "Connection: close"]) + "{}"], ["POST"]),
  );

const hugeHeaders = fc
  .oneof(
    fc.integer({ min: 16_000, max: 40_000 }).map((size) => [`X-Big: ${"x".repeat(size)}`]),
    fc.integer({ min: 2_100, max: 4_000 }).map((count) => Array.from({ length: count }, (_, i) => `X-${i}: ${i}`)),
    fc.integer({ min: 3_000, max: 4_000 }).map((count) => Array.from({ length: count }, () => "Cookie: a=b")),
  )
  .map((lines) => endWith("huge headers", [head(requestLine("GET", "/_up"), ["Host: upholster", ...lines])], ["GET"]));

const postHead = (path: string, auth: string, declared: number, extra: readonly string[] = []): string =>
  head(requestLine("POST", path), ["Host: upholster", `Authorization: ${auth}`, "Content-Type: application/json", `Content-Length: ${declared}`, ...extra]);

const commandPath = fc.constantFrom("/_smoosh/enqueue", "/_smoosh/enqueue_all", "/_session", "/_smoosh/flush", "/_db_updates", "/nowhere");

const shortBody = (auth: string) =>
  fc.tuple(commandPath, fc.integer({ min: 2, max: 5_000 }), fc.integer({ min: 0, max: 150 }), fc.boolean()).map(([path, declared, afterMs, cut]): RawExchange => {
    const writes = [postHead(path, auth, declared), "{\"db\":\"grown\"".slice(0, Math.max(0, declared - 1))];
    return cut ? { kind: "raw", label: "body shorter than Content-Length, cut", writes, pauseMs: 0, finish: { kind: "cut", afterMs }, methods: ["POST"] } : endWith("body shorter than Content-Length, then FIN", writes, ["POST"]);
  });

const longBody = (auth: string) =>
  fc
    .tuple(commandPath, fc.oneof(fc.constant("garbage\r\n\r\n"), fc.constant("GET /_up HTTP/1.1\r\nHost: x\r\n\r\n"), fc.string({ unit: "binary-ascii", maxLength: 100 })))
    .map(([path, extra]) => endWith("body longer than Content-Length (smuggled bytes)", [postHead(path, auth, 2) + "{}" + extra], ["POST", "GET"]));

const chunkBodies = fc.constantFrom(
  ["zz\r\nhello\r\n0\r\n\r\n"],
  ["5\r\nabc\r\n0\r\n\r\n"],
  ["FFFFFFFFFFFFFFFFFF\r\nx\r\n"],
  ["7fffffff\r\nabc"],
  ["5;a=b\r\n{\"a\":\r\n1\r\n}\r\n0\r\n\r\n"],
  ["2\r\n{}\r\n0\r\nTrailer: x\r\n\r\n"],
  ["2\r\n{}\r\n"],
  ["2\r\n{}"],
  ["-1\r\n\r\n"],
  ["2\r\n{}\r\n0\r\n"],
  ["1\r\n{\r\n", "1\r\n}\r\n", "0\r\n\r\n"],
  ["0\r\n\r\n0\r\n\r\n"],
);

const chunkedGarbage = (auth: string) =>
  fc.tuple(commandPath, chunkBodies).map(([path, chunks]) =>
    endWith(
      "chunked garbage",
      [head(requestLine("POST", path), ["Host: upholster", `Authorization: ${auth}`, "Content-Type: application/json", "Transfer-Encoding: chunked"]), ...chunks],
      ["POST"],
      5,
    ),
  );

const cutMidRequest = (auth: string) =>
  fc.tuple(validRequest(auth), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()).map(([request, fraction, fin]): RawExchange => {
    const writes = [request.text.slice(0, Math.floor(request.text.length * fraction))];
    return fin
      ? endWith("request cut at a byte, then FIN", writes, [request.method])
      : { kind: "raw", label: "request cut at a byte, then reset", writes, pauseMs: 0, finish: { kind: "cut", afterMs: 0 }, methods: [request.method] };
  });

const STREAMING = ["/_db_updates?feed=continuous&heartbeat=100", "/_db_updates?feed=eventsource", "/_db_updates?feed=longpoll&timeout=5000", "/_upholster/metrics", "/_smoosh/status", "/_db_updates?feed=continuous&since=now&timeout=10000"];

const cutMidResponse = (auth: string) =>
  fc.tuple(fc.constantFrom(...STREAMING), fc.integer({ min: 0, max: 250 })).map(
    ([path, afterMs]): RawExchange => ({
      kind: "raw",
      label: "response cut",
      writes: [head(requestLine("GET", path), ["Host: upholster", `Authorization: ${auth}`])],
      pauseMs: 0,
      finish: { kind: "cut", afterMs },
      methods: ["GET"],
    }),
  );

const pipelined = (auth: string) =>
  fc.array(fc.oneof(validRequest(auth), fc.constant({ method: "GET", text: "BROKEN\r\n\r\n" })), { minLength: 2, maxLength: 5 }).map((requests) =>
    endWith("pipelined requests", [requests.map((r) => r.text).join("")], requests.map((r) => r.method)),
  );

/** A request dribbled out a few bytes at a time, then closed before (or just after) it is complete. */
const slowloris = (auth: string) =>
  fc.tuple(validRequest(auth), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 2, max: 15 }), fc.integer({ min: 0, max: 100 })).map(
    ([request, pieceBytes, pauseMs, afterMs]): RawExchange => {
      const pieces = request.text.slice(0, Math.max(1, request.text.length - 2)).match(new RegExp(`[\\s\\S]{1,${pieceBytes}}`, "g")) ?? [];
      return { kind: "raw", label: "slowloris, closed before the end", writes: pieces.slice(0, 10), pauseMs, finish: { kind: "cut", afterMs }, methods: [request.method] };
    },
  );

const oldHttp = fc
  .tuple(requestPath, fc.constantFrom("HTTP/1.0", "HTTP/0.9"), fc.boolean())
  .map(([path, version, keepAlive]) => endWith("HTTP/1.0 without Host", [`GET ${path} ${version}\r\n${keepAlive ? "Connection: keep-alive\r\n" : ""}\r\n`], ["GET"]));

export const rawExchange = (auth: string): fc.Arbitrary<RawExchange> =>
  fc.oneof(
    badRequestLine,
    badHeaders,
    hugeHeaders,
    shortBody(auth),
    longBody(auth),
    chunkedGarbage(auth),
    cutMidRequest(auth),
    cutMidResponse(auth),
    pipelined(auth),
    slowloris(auth),
    oldHttp,
  );
