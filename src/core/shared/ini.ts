/**
 * CouchDB-style configuration as plain data: sections of string keys and
 * string values (`[smoosh.ratio_dbs] concurrency = "2"`). Parsing the INI text
 * happens in the shell (it is I/O); decoding it into typed config happens in
 * the core, with io-ts, so every subsystem validates its own section the same
 * way and names the section, key and value of anything it rejects.
 */
import * as t from "io-ts";
import { isLeft, type Either, left, right } from "fp-ts/lib/Either.js";

/** `{ "smoosh": { "db_channels": "ratio_dbs,slack_dbs" }, "smoosh.ratio_dbs": { ... } }` */
export type IniSections = Readonly<Record<string, Readonly<Record<string, string>>>>;

/**
 * A name every plain object inherits (`constructor`, `__proto__`,
 * `toString`, ...): looked up in plain objects (sections, keys, channels by
 * name), it finds something that was never configured.
 */
export const isInheritedName = (name: string): boolean => name in Object.prototype;

/** A rejected configuration value. */
export interface ConfigError {
  readonly section: string;
  readonly key: string;
  readonly value: string;
  readonly message: string;
}

export const formatConfigError = (e: ConfigError): string =>
  `[${e.section}] ${e.key} = ${JSON.stringify(e.value)}: ${e.message}`;

/** Read one value with a codec from `string` to `A`; absent keys give `fallback`. */
export const readValue = <A>(
  ini: IniSections,
  section: string,
  key: string,
  codec: t.Decoder<unknown, A>,
  fallback: A,
  errors: ConfigError[],
): A => {
  const raw = ini[section]?.[key];
  if (raw === undefined) return fallback;
  const decoded = codec.decode(raw.trim());
  if (isLeft(decoded)) {
    errors.push({ section, key, value: raw, message: `expected ${codec.name}` });
    return fallback;
  }
  return decoded.right;
};

/** Collect-all-errors result helper. */
export const orErrors = <A>(errors: readonly ConfigError[], value: A): Either<ConfigError[], A> =>
  errors.length > 0 ? left([...errors]) : right(value);

// --- codecs from INI strings -------------------------------------------------

const fromString = <A>(name: string, parse: (s: string) => A | undefined): t.Type<A, string, unknown> =>
  new t.Type<A, string, unknown>(
    name,
    (u): u is A => parse(String(u)) !== undefined,
    (u, c) => {
      if (typeof u !== "string") return t.failure(u, c);
      const a = parse(u);
      return a === undefined ? t.failure(u, c) : t.success(a);
    },
    (a) => String(a),
  );

/** A non-negative integer written in decimal. */
export const NonNegIntFromString = fromString<number>("a non-negative integer", (s) =>
  /^\d+$/.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : undefined,
);

/** A positive integer written in decimal. */
export const PosIntFromString = fromString<number>("a positive integer", (s) =>
  /^\d+$/.test(s) && Number(s) > 0 && Number.isSafeInteger(Number(s)) ? Number(s) : undefined,
);

/** A finite non-negative number (`2.0`, `536870912`, `1e6`). */
export const NonNegNumberFromString = fromString<number>("a non-negative number", (s) => {
  if (!/^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
});

/** A finite positive number (`0.5`, `2`). */
export const PosNumberFromString = fromString<number>("a positive number", (s) =>
  NonNegNumberFromString.is(s) && Number(s) > 0 ? Number(s) : undefined,
);

/** A non-negative number or `infinity` (CouchDB's spelling of "no limit"). */
export const NumberOrInfinityFromString = fromString<number>("a non-negative number or \"infinity\"", (s) =>
  s === "infinity" ? Number.POSITIVE_INFINITY : NonNegNumberFromString.is(s) ? Number(s) : undefined,
);

/** `true` or `false`, as CouchDB writes them. */
export const BooleanFromString = fromString<boolean>("true or false", (s) =>
  s === "true" ? true : s === "false" ? false : undefined,
);

/** A comma-separated list; blanks around commas ignored, empty items dropped. */
export const CsvFromString = fromString<readonly string[]>("a comma-separated list", (s) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x.length > 0),
);
