/**
 * Whether a function's source may write to the document it is given.
 *
 * Each function must see the document as stored, whatever the functions
 * before it did to their view of it. Parsing a copy per function is what
 * dominates a batch's cost in the guest, so functions that cannot write to
 * the document share one parsed copy per document; a function that may write
 * gets its own (the last function of a design doc can take the shared copy
 * too: nobody reads it after that).
 *
 * The check is lexical and errs towards "may write": any assignment, update
 * or destructuring whose target is a member (`x.y = `, `x[i]++`, `} =`),
 * `delete`, the name of a method or function that changes its receiver or
 * argument (push, sort, splice, assign, defineProperty, ...), code built from
 * strings (eval, Function, with), template literals (tagged calls), or
 * anything the scanner does not understand. Code written to hide a write can
 * still get past it; what it can then change is its own design doc's results,
 * not another's (every design doc has its own guest).
 */

const WRITING_NAMES = new Set([
  // Array.prototype and typed arrays
  "push", "pop", "shift", "unshift", "splice", "sort", "reverse", "fill", "copyWithin", "set",
  // Map, Set, WeakMap
  "add", "delete", "clear",
  // Object and Reflect
  "assign", "defineProperty", "defineProperties", "setPrototypeOf", "freeze", "seal", "preventExtensions", "deleteProperty", "__proto__", "__defineGetter__", "__defineSetter__",
  // code from strings, dynamic scope
  "eval", "Function", "with",
]);

const ASSIGNMENTS = new Set(["=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??="]);
const UPDATES = new Set(["++", "--"]);
const PUNCTUATORS = [
  ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
  "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>",
];
/** After these, a `/` starts a regular expression; after anything else it divides. */
const BEFORE_REGEX = new Set([
  "(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";", "+", "-", "*", "%", "<", ">", "~", "^", "=>", "&&", "||", "??", "==", "===", "!=", "!==", "<=", ">=",
  "return", "typeof", "case", "do", "else", "in", "of", "void", "throw", "new", "yield", "await",
]);

type Token = { readonly kind: "name" | "punct" | "literal"; readonly text: string };

const isNameStart = (c: string): boolean => /[A-Za-z_$]/.test(c);
const isNamePart = (c: string): boolean => /[\w$]/.test(c);

/** The source's tokens, or undefined where the scanner gives up (template literals, non-ASCII names, unterminated literals). */
const tokenize = (source: string): Token[] | undefined => {
  const tokens: Token[] = [];
  let i = 0;
  const end = (from: number, terminator: string): number => {
    const at = source.indexOf(terminator, from);
    return at < 0 ? source.length : at + terminator.length;
  };
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (/\s/.test(c)) i++;
    else if (c === "/" && next === "/") i = end(i, "\n");
    else if (c === "/" && next === "*") i = end(i + 2, "*/");
    else if (c === "`" || c.charCodeAt(0) > 127) return undefined;
    else if (c === '"' || c === "'") {
      const close = skipQuoted(source, i, c);
      if (close === undefined) return undefined;
      tokens.push({ kind: "literal", text: "string" });
      i = close;
    } else if (c === "/" && (tokens.length === 0 || BEFORE_REGEX.has(tokens[tokens.length - 1]!.text))) {
      const close = skipRegex(source, i);
      if (close === undefined) return undefined;
      tokens.push({ kind: "literal", text: "regex" });
      i = close;
    } else if (/[0-9]/.test(c) || (c === "." && next !== undefined && /[0-9]/.test(next))) {
      let j = i + 1;
      while (j < source.length && /[\w.]/.test(source[j]!)) j++;
      tokens.push({ kind: "literal", text: "number" });
      i = j;
    } else if (isNameStart(c)) {
      let j = i + 1;
      while (j < source.length && isNamePart(source[j]!)) j++;
      tokens.push({ kind: "name", text: source.slice(i, j) });
      i = j;
    } else {
      const punct = PUNCTUATORS.find((p) => source.startsWith(p, i)) ?? c;
      tokens.push({ kind: "punct", text: punct });
      i += punct.length;
    }
  }
  return tokens;
};

const skipQuoted = (source: string, from: number, quote: string): number | undefined => {
  for (let i = from + 1; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === quote) return i + 1;
    else if (c === "\n") return undefined;
  }
  return undefined;
};

const skipRegex = (source: string, from: number): number | undefined => {
  let inClass = false;
  for (let i = from + 1; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "\n") return undefined;
    else if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    else if (c === "/" && !inClass) {
      let j = i + 1;
      while (j < source.length && /[a-z]/i.test(source[j]!)) j++;
      return j;
    }
  }
  return undefined;
};

const MEMBER_ACCESS = new Set([".", "?."]);

/** Whether what ends just before `tokens[at]` is a member, a destructuring pattern or a parenthesized target. */
const memberBefore = (tokens: readonly Token[], at: number): boolean => {
  const before = tokens[at - 1];
  if (before === undefined) return false;
  if (before.text === "]" || before.text === "}" || before.text === ")") return true;
  return before.kind === "name" && MEMBER_ACCESS.has(tokens[at - 2]?.text ?? "");
};

/** For a prefix `++`/`--` at `tokens[at]`: whether its operand is a member. */
const memberAfter = (tokens: readonly Token[], at: number): boolean => {
  const before = tokens[at - 1];
  if (before !== undefined && (before.kind === "name" || before.kind === "literal")) return false; // postfix
  const after = tokens[at + 1];
  return after === undefined || after.kind !== "name" || [".", "?.", "["].includes(tokens[at + 2]?.text ?? "");
};

export const mayWriteDocument = (source: string): boolean => {
  const tokens = tokenize(source);
  if (tokens === undefined) return true;
  return tokens.some((token, at) => {
    if (token.kind === "name") {
      if (WRITING_NAMES.has(token.text)) return true;
      // for (x.y in z) and for (x.y of z) assign to x.y.
      return (token.text === "in" || token.text === "of") && memberBefore(tokens, at);
    }
    if (token.kind !== "punct") return false;
    if (ASSIGNMENTS.has(token.text)) return memberBefore(tokens, at);
    if (UPDATES.has(token.text)) return memberBefore(tokens, at) || memberAfter(tokens, at);
    return false;
  });
};
