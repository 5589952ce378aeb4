/**
 * The JavaScript that runs inside every guest context before the user's
 * functions: couchjs's globals (emit, log, toJSON, sum, isArray; st_index for
 * hastings) and the batch loop the host drives.
 *
 * The loop takes a whole batch as one string (one JSON document per line) and
 * returns one JSON string, so a batch costs one host<->guest crossing however
 * many documents it has (`loadRun`; `load` and `run` apart when resuming).
 *
 * Output: an array with one entry per document, `[[part, ...], [log, ...]]`,
 * one part per function: a JSON array (the rows emitted, or the geometries
 * indexed) or `{"k": failureKind, "e": message}`.
 *
 * The loop keeps its intrinsics (JSON, Reflect.apply, Array.prototype.join...)
 * from before any user code ran, so a function that replaces a global cannot
 * redirect it; one that tampers with a prototype can only garble its own design
 * doc's results, which the host decodes defensively.
 *
 * Entry points (the object the prelude evaluates to, kept by the host, never a global):
 * - compile(index, kind, source, readsOnly) -> "" or the compile error; readsOnly (1/0):
 *   the function cannot write to its document (document-writes.ts), so it may share one
 *   parsed copy with the others that cannot
 * - refuse(index, kind, message): records a compile failure the host observed
 * - load(text) -> number of documents
 * - loadRun(text) -> load(text), then run(0, 0, "", ""): a fresh batch in one call (most are a
 *   document or two, and each crossing costs the host more than mapping one). Stopped while
 *   loading, progress() says d = -1
 * - run(fromDoc, fromFunction, carry, overrides) -> output for documents fromDoc..
 *   carry: "" or JSON [parts, logs] of fromDoc's functions before fromFunction;
 *   overrides: "" or JSON {"doc:function": part} of outcomes decided by the host
 * - progress() -> JSON {d, f, ms, parts, logs, logMark, done}: where an interrupted run was
 *   (logs[0..logMark) were logged before function f started on document d)
 */
export const GUEST_PRELUDE = String.raw`
(function (global) {
  "use strict";
  var parse = JSON.parse, stringify = JSON.stringify, now = Date.now, isArrayNative = Array.isArray;
  var apply = Reflect.apply, defineProperty = Object.defineProperty;
  var join = Array.prototype.join;
  var split = String.prototype.split, stringSlice = String.prototype.slice, charCodeAt = String.prototype.charCodeAt;
  var toText = String, indirectEval = eval, InternalErrorType = global.InternalError;
  var OUT_OF_MEMORY = { outOfMemory: true };
  var MAX_MESSAGE_LENGTH = 2000;

  var fns = [], kinds = [], readsOnly = [], compileFailures = [];
  var docs = [], overrides = null;
  // The copy of document sharedFor that the read-only functions (and the last function) share.
  var shared = null, sharedFor = -1;
  // collected: the running call's rows (or geometries) as comma-separated JSON texts.
  var running = null, collected = "", logs = [], parts = [], done = [];
  var at = { d: 0, f: 0, ms: 0, logCount: 0 };

  function json(value) { var text = stringify(value); return text === undefined ? "null" : text; }
  // Most lists here hold one string (a function's part, a batch's one document): itself, without a native call.
  function joined(list) { return list.length === 1 && typeof list[0] === "string" ? list[0] : apply(join, list, [","]); }
  function truncated(text) { return text.length > MAX_MESSAGE_LENGTH ? apply(stringSlice, text, [0, MAX_MESSAGE_LENGTH]) + "..." : text; }
  function failure(kind, message) { return '{"k":"' + kind + '","e":' + json(message) + "}"; }

  // QuickJS throws null when it cannot even allocate the error (couchjs's dispatcher says the same),
  // so a function that throws null is taken for one that ran out of memory.
  function isOutOfMemory(error) {
    if (error === OUT_OF_MEMORY || error === null) return true;
    try {
      return InternalErrorType !== undefined && error instanceof InternalErrorType && error.message === "out of memory";
    } catch (_) {
      return false;
    }
  }

  function describe(error) {
    try {
      if (error !== null && typeof error === "object" && typeof error.message === "string") {
        return truncated((typeof error.name === "string" ? error.name : "Error") + ": " + error.message);
      }
      return truncated(typeof error === "string" ? error : json(error));
    } catch (_) {
      return "an unprintable value was thrown";
    }
  }

  function define(name, fn) {
    defineProperty(global, name, { value: fn, writable: false, enumerable: false, configurable: false });
  }

  // Serialized at once: the row is a copy, whatever the function does to its values later.
  // In an array, undefined (and functions) become null, as couchjs's emit does.
  define("emit", function emit(key, value) {
    if (running !== "map") throw new Error("emit() is only available in map functions");
    var row = stringify([key, value]);
    collected = collected === "" ? row : collected + "," + row;
  });
  define("st_index", function st_index(geometry) {
    if (running !== "st_index") throw new Error("st_index() is only available in st_index functions");
    var text = json(geometry);
    collected = collected === "" ? text : collected + "," + text;
  });
  define("log", function log(message) {
    logs[logs.length] = typeof message === "string" ? message : toText(stringify(message));
  });
  define("toJSON", function toJSON(value) { return stringify(value); });
  define("sum", function sum(values) {
    var total = 0;
    for (var i in values) total += values[i];
    return total;
  });
  define("isArray", function isArray(value) { return isArrayNative(value); });

  // "function(doc) {...};" is common in design docs; the parentheses below would reject the ";".
  function withoutTrailingSemicolons(source) {
    var end = source.length;
    while (end > 0) {
      var code = apply(charCodeAt, source, [end - 1]);
      if (code !== 59 && code > 32) break;
      end--;
    }
    return apply(stringSlice, source, [0, end]);
  }

  function refuse(index, kind, message) {
    kinds[index] = kind;
    fns[index] = null;
    compileFailures[index] = failure("compile", message);
    return message;
  }

  function evaluate(source) {
    // Newlines, so that a trailing // comment cannot swallow the closing parenthesis.
    try {
      return indirectEval("(\n" + withoutTrailingSemicolons(source) + "\n)");
    } catch (error) {
      if (isOutOfMemory(error)) throw OUT_OF_MEMORY;
      // A program whose value is a function ("var f = function () {...}; f") is accepted too.
      try {
        var value = indirectEval(source);
        if (typeof value === "function") return value;
      } catch (_) {
        if (isOutOfMemory(_)) throw OUT_OF_MEMORY;
      }
      throw error;
    }
  }

  function compile(index, kind, source, onlyReads) {
    var fn;
    try {
      fn = evaluate(source);
    } catch (error) {
      if (isOutOfMemory(error)) throw OUT_OF_MEMORY;
      return refuse(index, kind, describe(error));
    }
    if (typeof fn !== "function") return refuse(index, kind, "the source does not evaluate to a function");
    kinds[index] = kind;
    readsOnly[index] = onlyReads === 1;
    fns[index] = fn;
    return "";
  }

  function load(text) {
    sharedFor = -1;
    docs = apply(split, text, ["\n"]);
    done = [];
    return docs.length;
  }

  function loadRun(text) {
    // Until the documents loop starts, progress() reports d = -1: the stop came while loading.
    at.d = -1;
    // load(text), then run(0, 0, "", "") without parsing its arguments: the common case, kept short.
    load(text);
    overrides = null;
    return runFrom(0, 0, [], []);
  }

  function runOne(d, f) {
    var fn = fns[f];
    if (fn === null) return compileFailures[f];
    at.d = d; at.f = f; at.logCount = logs.length; at.ms = now();
    collected = "";
    running = kinds[f];
    try {
      // A function that may write gets a copy of its own, so that the next one sees the document as stored.
      fn(readsOnly[f] || f === fns.length - 1 ? sharedCopy(d) : parse(docs[d]));
    } catch (error) {
      running = null;
      if (isOutOfMemory(error)) throw OUT_OF_MEMORY;
      return failure("exception", describe(error));
    }
    running = null;
    return "[" + collected + "]";
  }

  function sharedCopy(d) {
    if (sharedFor !== d) {
      shared = parse(docs[d]);
      sharedFor = d;
    }
    return shared;
  }

  function partOf(d, f) {
    if (overrides !== null) {
      var decided = overrides[d + ":" + f];
      if (decided !== undefined) return decided;
    }
    return runOne(d, f);
  }

  function run(fromDoc, fromFunction, carry, overridesText) {
    // A resumed run starts from the stored text: the interrupted attempt may have written to the shared copy.
    sharedFor = -1;
    overrides = overridesText === "" ? null : parse(overridesText);
    // Nothing of the last attempt is reported if parsing the carried part stops.
    parts = [];
    logs = [];
    var carried = carry === "" ? null : parse(carry);
    return runFrom(fromDoc, fromFunction, carried === null ? [] : carried[0], carried === null ? [] : carried[1]);
  }

  /** Runs the loaded documents from (fromDoc, fromFunction), with the parts and logs an interrupted attempt carried. */
  function runFrom(fromDoc, fromFunction, carriedParts, carriedLogs) {
    done = [];
    parts = carriedParts;
    logs = carriedLogs;
    at.d = fromDoc; at.f = fromFunction; at.ms = now(); at.logCount = logs.length;
    for (var d = fromDoc; d < docs.length; d++) {
      for (var f = d === fromDoc ? fromFunction : 0; f < fns.length; f++) parts[f] = overrides === null ? runOne(d, f) : partOf(d, f);
      done[done.length] = "[[" + joined(parts) + "]," + (logs.length === 0 ? "[]" : stringify(logs)) + "]";
      parts = [];
      logs = [];
    }
    return "[" + joined(done) + "]";
  }

  // A fresh array, not parts.slice(): slice consults a constructor a user function could replace.
  function firstParts(count) {
    var copy = [];
    for (var i = 0; i < count && i < parts.length; i++) copy[i] = parts[i];
    return copy;
  }

  function progress() {
    return '{"d":' + at.d + ',"f":' + at.f + ',"ms":' + at.ms +
      ',"parts":' + stringify(firstParts(at.f)) +
      ',"logs":' + stringify(logs) + ',"logMark":' + at.logCount +
      ',"done":[' + joined(done) + "]}";
  }

  return { compile: compile, refuse: refuse, load: load, loadRun: loadRun, run: run, progress: progress };
})(globalThis)
`;
