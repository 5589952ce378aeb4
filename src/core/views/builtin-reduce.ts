/**
 * CouchDB's built-in reduce functions (couch_query_servers), over one group
 * of rows:
 *
 * - `_count`: the number of rows;
 * - `_sum`: numbers add up; arrays of numbers add element-wise (a number
 *   counts as a one-element array against an array); objects add field by
 *   field, recursively (fields sorted by name, as CouchDB returns them).
 *   Anything else does not fail the query: the value becomes CouchDB's
 *   `{"error": "builtin_reduce_error", "reason": ..., "caused_by": value}`;
 * - `_stats`: `{sum, count, min, max, sumsqr}` of numbers, element-wise for
 *   arrays, and pre-reduced stats objects taken as they are; anything else
 *   fails the query (`ReduceFailure`, CouchDB's `invalid_value`);
 * - `_approx_count_distinct`: distinct keys, counted exactly here (CouchDB
 *   estimates with HyperLogLog, exact for small sets).
 *
 * CouchDB accumulates a group's rows in reverse before reducing them, so the
 * value a `builtin_reduce_error` names is the last bad one in the query's
 * direction; rows arrive here in the query's direction and are folded from
 * the end.
 */

import { erlangTerm } from "./erlang-term.js";

/** A reduce that fails the whole query (CouchDB: 500 with `error` and `reason`). */
export class ReduceFailure extends Error {
  constructor(
    readonly error: string,
    readonly reason: string,
  ) {
    super(`${error}: ${reason}`);
    this.name = "ReduceFailure";
  }
}

/** One group's rows, in the query's direction. */
export interface ReduceInput {
  readonly count: number;
  key(i: number): unknown;
  value(i: number): unknown;
}

export interface BuiltinReducer {
  readonly name: "_sum" | "_count" | "_stats" | "_approx_count_distinct";
  reduce(input: ReduceInput): unknown;
}

const SUM_ERROR_REASON =
  "The _sum function requires that map values be numbers, arrays of numbers, or objects. Objects cannot be mixed with other data structures. Objects can be arbitrarily nested, provided that the values for all fields are themselves numbers, arrays of numbers, or objects.";

type Json = unknown;

/** A value that stops the sum: a bad value (becomes the error object) or an error object met on the way. */
class SumStop {
  constructor(readonly result: Json) {}
}

const sumError = (causedBy: Json): SumStop => new SumStop({ error: "builtin_reduce_error", reason: SUM_ERROR_REASON, caused_by: causedBy });

const isObject = (value: Json): value is Record<string, Json> => typeof value === "object" && value !== null && !Array.isArray(value);

const sumArrays = (xs: readonly Json[], ys: readonly Json[]): Json[] => {
  const out: Json[] = [];
  const length = Math.max(xs.length, ys.length);
  for (let i = 0; i < length; i++) {
    if (i >= xs.length) return [...out, ...ys.slice(i)];
    if (i >= ys.length) return [...out, ...xs.slice(i)];
    const x = xs[i];
    const y = ys[i];
    if (typeof x !== "number" || typeof y !== "number") throw sumError(xs.slice(i));
    out.push(x + y);
  }
  return out;
};

/** Byte order of names, as Erlang's lists:sort on binaries. */
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const sumObjects = (value: Record<string, Json>, acc: Record<string, Json>): Record<string, Json> => {
  const out: Record<string, Json> = {};
  for (const name of [...new Set([...Object.keys(value), ...Object.keys(acc)])].sort(byName)) {
    const inValue = Object.prototype.hasOwnProperty.call(value, name);
    const inAcc = Object.prototype.hasOwnProperty.call(acc, name);
    out[name] = inValue && inAcc ? sumValues(value[name], acc[name]) : inValue ? value[name] : acc[name];
  }
  return out;
};

/** couch_query_servers:sum_values/2. */
const sumValues = (value: Json, acc: Json): Json => {
  if (typeof value === "number" && typeof acc === "number") return acc + value;
  if (Array.isArray(value) && Array.isArray(acc)) return sumArrays(acc, value);
  if (typeof value === "number" && Array.isArray(acc)) return sumArrays(acc, [value]);
  if (Array.isArray(value) && typeof acc === "number") return sumArrays([acc], value);
  if (isObject(value)) {
    if (value["error"] === "builtin_reduce_error") throw new SumStop(value);
    if (acc === 0) return value;
    if (isObject(acc)) return sumObjects(value, acc);
  }
  throw sumError(value);
};

/** Numbers only (the usual case), in the same order as the general fold; undefined at the first other value. */
const sumOfNumbers = (input: ReduceInput): number | undefined => {
  let total = 0;
  for (let i = input.count - 1; i >= 0; i--) {
    const value = input.value(i);
    if (typeof value !== "number") return undefined;
    total += value;
  }
  return total;
};

const sum: BuiltinReducer = {
  name: "_sum",
  reduce(input) {
    const numbers = sumOfNumbers(input);
    if (numbers !== undefined) return numbers;
    let acc: Json = 0;
    try {
      for (let i = input.count - 1; i >= 0; i--) acc = sumValues(input.value(i), acc);
      return acc;
    } catch (stop) {
      if (stop instanceof SumStop) return stop.result;
      throw stop;
    }
  },
};

const count: BuiltinReducer = { name: "_count", reduce: (input) => input.count };

type Stats = { sum: number; count: number; min: number; max: number; sumsqr: number };
type StatsAcc = Stats | StatsAcc[];

const statsError = (value: Json): ReduceFailure =>
  new ReduceFailure("invalid_value", `The _stats function requires that map values be numbers or arrays of numbers, not '${erlangTerm(value, "p")}'`);

const numberField = (stats: Record<string, Json>, name: keyof Stats): number => {
  const value = stats[name];
  if (typeof value === "number") return value;
  if (value === undefined) throw new ReduceFailure("invalid_value", `user _stats input missing required field ${name} (${erlangTerm(stats, "p").slice(1, -1)})`);
  throw new ReduceFailure("invalid_value", `non-numeric _stats input received for ${name}: ${erlangTerm(value)}`);
};

const unpackStats = (stats: Record<string, Json>): Stats => ({
  sum: numberField(stats, "sum"),
  count: numberField(stats, "count"),
  min: numberField(stats, "min"),
  max: numberField(stats, "max"),
  sumsqr: numberField(stats, "sumsqr"),
});

const statsOf = (value: Json, failure: (value: Json) => ReduceFailure): StatsAcc => {
  if (typeof value === "number") return { sum: value, count: 1, min: value, max: value, sumsqr: value * value };
  if (Array.isArray(value)) return value.map((item) => statsOf(item, failure));
  if (isObject(value)) return unpackStats(value);
  throw failure(value);
};

const combineStats = (a: StatsAcc, b: StatsAcc, value: Json): StatsAcc => {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) throw statsError(value);
    return a.map((item, i) => combineStats(item, b[i]!, value));
  }
  if (Array.isArray(a) || Array.isArray(b)) throw statsError(value);
  return { sum: a.sum + b.sum, count: a.count + b.count, min: Math.min(a.min, b.min), max: Math.max(a.max, b.max), sumsqr: a.sumsqr + b.sumsqr };
};

const stats: BuiltinReducer = {
  name: "_stats",
  reduce(input) {
    if (input.count === 0) return { sum: 0, count: 0, min: 0, max: 0, sumsqr: 0 };
    const first = input.value(input.count - 1);
    let acc = statsOf(first, (v) => new ReduceFailure("invalid_value", `non-numeric _stats input: ${erlangTerm(v)}`));
    for (let i = input.count - 2; i >= 0; i--) {
      const value = input.value(i);
      acc = combineStats(statsOf(value, statsError), acc, value);
    }
    return acc;
  },
};

const approxCountDistinct: BuiltinReducer = {
  name: "_approx_count_distinct",
  reduce(input) {
    // CouchDB hashes the key's Erlang term: keys that only collate equal ("c", "c\u200B") are distinct.
    const seen = new Set<string>();
    for (let i = 0; i < input.count; i++) seen.add(JSON.stringify(input.key(i)) ?? "null");
    return seen.size;
  },
};

const BUILTINS: readonly BuiltinReducer[] = [approxCountDistinct, count, stats, sum];

/** The built-in a reduce source names (CouchDB matches on the prefix: `_sum` and `_sum2` are both `_sum`), if any. */
export const builtinReducerOf = (source: string): BuiltinReducer | undefined => BUILTINS.find((reducer) => source.startsWith(reducer.name));

/** Sources starting with `_` are built-ins: unknown ones cannot run anywhere. */
export const isBuiltinSource = (source: string): boolean => source.startsWith("_");
