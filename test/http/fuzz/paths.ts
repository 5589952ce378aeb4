/**
 * Request targets: every known route (also under each node prefix), then
 * bent the ways paths go wrong: trailing and double slashes, dot segments,
 * percent-encoding (valid, invalid, overlong, NUL), unicode, case, sheer
 * length; plus random paths. Queries: `/_db_updates`' parameters with good
 * and bad values, duplicates, unknown keys, very long strings.
 */
import fc from "fast-check";
import { KNOWN_ROUTES, NODE_PREFIXES, type KnownRoute } from "./routes.js";

/** A route's path, under each node prefix where it is also served. */
const pathOf = (route: KnownRoute): fc.Arbitrary<string> =>
  route.underNode === true ? fc.constantFrom(...NODE_PREFIXES).map((prefix) => `${prefix}${route.path}`) : fc.constant(route.path);

const routePath: fc.Arbitrary<string> = fc.constantFrom(...KNOWN_ROUTES).chain(pathOf);

const segment = fc.stringMatching(/^[A-Za-z0-9_@.$()+-]{1,12}$/);
const unicodeText = fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 });

/** Every UTF-8 byte of `text` as `%XX` (a lone surrogate becomes U+FFFD's bytes, where encodeURIComponent throws). */
const percentBytes = (text: string): string => [...Buffer.from(text, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join("");

const randomPath: fc.Arbitrary<string> = fc.oneof(
  fc.array(segment, { minLength: 0, maxLength: 6 }).map((parts) => `/${parts.join("/")}`),
  fc.webPath().map((p) => (p.startsWith("/") ? p : `/${p}`)),
  fc.constantFrom("/_node", "/_node/", "/_node//_smoosh/status", "/_smoosh", "/_smoosh/", "/_upholster", "/favicon.ico", "/_all_dbs", "/_utils/", "/fx_db/_compact", "/grown", "/_global_changes"),
);

const ENCODINGS = ["%", "%2", "%zz", "%00", "%2F", "%2f", "%5C", "%C0%AF", "%FF", "%E2%80%AE", "%2e%2e", "%25", "%u0041", "%0D%0A"];

/** Percent-encodes one character at `at` (or puts a broken escape there); never the leading `/`, which makes it a path. */
const encodeAt = (path: string, at: number, escape: string | undefined): string => {
  const i = Math.max(1, Math.min(at, path.length - 1));
  const char = path[i] ?? "";
  const encoded = escape ?? `%${char.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`;
  return `${path.slice(0, i)}${encoded}${path.slice(i + 1)}`;
};

const insertAt = (path: string, at: number, text: string): string => {
  const i = Math.min(at, path.length);
  return `${path.slice(0, i)}${text}${path.slice(i)}`;
};

type Bend = (path: string) => fc.Arbitrary<string>;

const BENDS: readonly Bend[] = [
  (p) => fc.constant(p),
  (p) => fc.constant(`${p}/`),
  (p) => fc.constant(`/${p}`),
  (p) => fc.nat(p.length).map((at) => insertAt(p, at, "/")),
  (p) => fc.tuple(fc.nat(p.length), fc.constantFrom("/.", "/..", "/../..", "/%2e", "/%2e%2e", "/./")).map(([at, dots]) => insertAt(p, at, dots)),
  (p) => fc.tuple(fc.nat(p.length), fc.option(fc.constantFrom(...ENCODINGS), { nil: undefined })).map(([at, escape]) => encodeAt(p, at, escape)),
  (p) => unicodeText.map((text) => `${p}/${percentBytes(text)}`),
  (p) => fc.constant(p.toUpperCase()),
  (p) => fc.integer({ min: 1_000, max: 15_000 }).map((length) => `${p}/${"a".repeat(length)}`),
  (p) => fc.integer({ min: 17_000, max: 30_000 }).map((length) => `${p}${"/x".repeat(length / 2)}`),
];

const bent = (path: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(path, fc.constantFrom(...BENDS)).chain(([p, bend]) => bend(p));

/** The route's path, bent a quarter of the time. */
export const aimedPath = (route: KnownRoute): fc.Arbitrary<string> => fc.oneof({ weight: 3, arbitrary: pathOf(route) }, { weight: 1, arbitrary: bent(pathOf(route)) });

/** Mostly known routes, some bent, a fifth random paths. */
export const requestPath: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: routePath },
  { weight: 2, arbitrary: bent(routePath) },
  { weight: 2, arbitrary: randomPath },
);

const intText = fc.oneof(
  fc.nat(300).map(String),
  fc.constantFrom("0", "-1", "+5", "1e3", "1.5", "0x10", " 1", "", "abc", "true", "NaN", "Infinity", "9007199254740993", "99999999999999999999", "2147483648", "4294967296000"),
);
const seqText = fc.oneof(
  fc.constantFrom("0", "now", "", "-1", "1-", "1-abc", "abc", "now ", "NOW", "0-g1AAAA", "99999999999999999999", "1-g1AAAACheJzLYWBgYMpgTmEQ"),
  fc.nat(1_000).map(String),
  fc.tuple(fc.nat(50), fc.base64String({ maxLength: 40 })).map(([n, b]) => `${n}-${b.replace(/[+/=]/g, "_")}`),
);

const FEED_PARAMS: Readonly<Record<string, fc.Arbitrary<string>>> = {
  feed: fc.constantFrom("normal", "longpoll", "continuous", "eventsource", "Normal", "websocket", ""),
  since: seqText,
  limit: intText,
  descending: fc.constantFrom("true", "false", "maybe", "", "TRUE", "1"),
  heartbeat: fc.oneof(fc.constant("true"), intText),
  timeout: fc.oneof(fc.nat(300).map(String), intText),
};

const anyValue = fc.oneof(fc.string({ maxLength: 20 }), unicodeText, fc.constantFrom("%zz", "%", "a%00b", "x".repeat(5_000)));
const param: fc.Arbitrary<readonly [string, string]> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...Object.keys(FEED_PARAMS)).chain((key) => FEED_PARAMS[key]!.map((value) => [key, value] as const)) },
  { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom("style", "filter", "include_docs")), anyValue) },
);

/** Keys and values percent-encoded, or left raw (`%`, `&`, `=` and all) except what would break the request line. */
const encodeParam = ([key, value]: readonly [string, string], raw: boolean): string =>
  raw ? `${key}=${value}`.replace(/[^\x21-\x7e]/gu, percentBytes) : `${percentBytes(key)}=${percentBytes(value)}`;

/** `?` and parameters, mostly `/_db_updates`' own; sometimes the first repeated (the first counts). */
const paramsQuery: fc.Arbitrary<string> = fc
  .tuple(fc.array(param, { minLength: 1, maxLength: 5 }), fc.boolean(), fc.boolean())
  .map(([params, raw, repeatFirst]) => [...params, ...(repeatFirst && params[0] !== undefined ? [params[0]] : [])].map((p) => encodeParam(p, raw)).join("&"))
  .map((query) => `?${query}`);

const oddQuery = fc.constantFrom("?", "?&&", "?=x", "?feed", "?feed=", "?a=%zz&feed=continuous", `?since=${"9".repeat(3_000)}`, `?${"limit=1&".repeat(800)}`);

/** For `/_db_updates`: its parameters almost always. */
export const feedQuery: fc.Arbitrary<string> = fc.oneof({ weight: 1, arbitrary: fc.constant("") }, { weight: 8, arbitrary: paramsQuery }, { weight: 1, arbitrary: oddQuery });

/** For anything: none, mostly. */
export const requestQuery: fc.Arbitrary<string> = fc.oneof({ weight: 6, arbitrary: fc.constant("") }, { weight: 3, arbitrary: paramsQuery }, { weight: 1, arbitrary: oddQuery });
