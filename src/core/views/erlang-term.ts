/**
 * A JSON value as Erlang prints the term CouchDB holds for it (`io_lib`
 * `~w`, or `~p`), for the error texts CouchDB builds that way: strings are
 * binaries (`<<108,49>>`, or `<<"l1">>` with `~p` when printable), objects
 * `{[{<<"k">>,V}]}`, null/true/false atoms.
 */

const utf8Bytes = (text: string): number[] => [...new TextEncoder().encode(text)];

const isPrintable = (text: string): boolean => /^[\x20-\x7e]*$/.test(text);

const number = (n: number): string => (Number.isInteger(n) ? String(n) : String(n).replace(/^(-?\d+)(e.*)?$/, "$1.0$2"));

export function erlangTerm(value: unknown, style: "w" | "p" = "w"): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number") return number(value);
  if (typeof value === "string") {
    if (style === "p" && isPrintable(value)) return `<<${JSON.stringify(value)}>>`;
    return `<<${utf8Bytes(value).join(",")}>>`;
  }
  if (Array.isArray(value)) return `[${value.map((item) => erlangTerm(item, style)).join(",")}]`;
  const pairs = Object.entries(value as Record<string, unknown>).map(([name, item]) => `{${erlangTerm(name, style)},${erlangTerm(item, style)}}`);
  return `{[${pairs.join(",")}]}`;
}
