/**
 * A fast path for the two WKT queries clients send most, `POINT(x y)` and
 * `POLYGON((x y, ...), ...)`, 5-10x cheaper than jsts' tokenizer. It accepts
 * a strict subset of what jsts' reader accepts, on which both read the same
 * numbers (`-?digits[.digits]`, where `parseFloat` and `Number` agree) and
 * build the same geometry (the same factory calls, see jsts.ts); anything
 * else (other types, Z/M, exponents, unusual spacing, a ring jsts would
 * refuse, a non-finite number, text after the geometry) returns undefined
 * and goes through jsts as before, so the answers and the errors are
 * unchanged.
 */
import { coordinatesOf, pointGeometry, polygonFromRings, type JstsCoordinate, type JstsGeometry } from "./jsts.js";

const SPACE = 32;
const TAB = 9;
const CR = 13;
const LF = 10;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
const MINUS = 45;
const DOT = 46;
const OPEN = 40;
const CLOSE = 41;
const COMMA = 44;

/** jsts' whitespace exactly (not JavaScript's: jsts refuses a no-break space). */
const isSpace = (c: number): boolean => c === SPACE || c === TAB || c === CR || c === LF;
const isDigit = (c: number): boolean => c >= DIGIT_0 && c <= DIGIT_9;

class Scanner {
  at = 0;

  constructor(readonly text: string) {}

  skipSpaces(): void {
    while (this.at < this.text.length && isSpace(this.text.charCodeAt(this.at))) this.at++;
  }

  /** Consumes `c` after optional spaces. */
  take(c: number): boolean {
    this.skipSpaces();
    if (this.text.charCodeAt(this.at) !== c) return false;
    this.at++;
    return true;
  }

  keyword(): string {
    this.skipSpaces();
    const start = this.at;
    for (;;) {
      const c = this.text.charCodeAt(this.at) | 0x20;
      if (c < 97 || c > 122) break;
      this.at++;
    }
    return this.text.slice(start, this.at).toUpperCase();
  }

  /** `-?digits(.digits)?`, ended by a space, comma or parenthesis; NaN when the text is anything else. */
  number(): number {
    this.skipSpaces();
    const start = this.at;
    if (this.text.charCodeAt(this.at) === MINUS) this.at++;
    const digitsFrom = this.at;
    while (isDigit(this.text.charCodeAt(this.at))) this.at++;
    if (this.at === digitsFrom) return NaN;
    if (this.text.charCodeAt(this.at) === DOT) {
      const fractionFrom = ++this.at;
      while (isDigit(this.text.charCodeAt(this.at))) this.at++;
      if (this.at === fractionFrom) return NaN;
    }
    const next = this.text.charCodeAt(this.at);
    if (!(isSpace(next) || next === COMMA || next === CLOSE)) return NaN;
    return Number(this.text.slice(start, this.at));
  }

  /** `x y` with at least one space between; undefined otherwise. */
  position(): [number, number] | undefined {
    const x = this.number();
    if (!isSpace(this.text.charCodeAt(this.at))) return undefined;
    const y = this.number();
    return Number.isFinite(x) && Number.isFinite(y) ? [x, y] : undefined;
  }

  atEnd(): boolean {
    this.skipSpaces();
    return this.at === this.text.length;
  }
}

function ring(scanner: Scanner): JstsCoordinate[] | undefined {
  if (!scanner.take(OPEN)) return undefined;
  const xs: number[] = [];
  const ys: number[] = [];
  do {
    const p = scanner.position();
    if (p === undefined) return undefined;
    xs.push(p[0]);
    ys.push(p[1]);
  } while (scanner.take(COMMA));
  if (!scanner.take(CLOSE)) return undefined;
  // What jsts' LinearRing refuses (open, or 1 to 3 points) goes through jsts, for its error message.
  const last = xs.length - 1;
  if (xs.length < 4 || xs[0] !== xs[last] || ys[0] !== ys[last]) return undefined;
  return coordinatesOf(xs, ys);
}

function polygon(scanner: Scanner): JstsGeometry | undefined {
  if (!scanner.take(OPEN)) return undefined;
  const rings: JstsCoordinate[][] = [];
  do {
    const r = ring(scanner);
    if (r === undefined) return undefined;
    rings.push(r);
  } while (scanner.take(COMMA));
  return scanner.take(CLOSE) ? polygonFromRings(rings) : undefined;
}

function point(scanner: Scanner): JstsGeometry | undefined {
  if (!scanner.take(OPEN)) return undefined;
  const p = scanner.position();
  return p !== undefined && scanner.take(CLOSE) ? pointGeometry(p[0], p[1]) : undefined;
}

/** The geometry jsts would read from `text`, when `text` is in the fast path's subset; else undefined. */
export function readSimpleWkt(text: string): JstsGeometry | undefined {
  if (text.length > 100_000) return undefined;
  const scanner = new Scanner(text);
  const kind = scanner.keyword();
  const geometry = kind === "POINT" ? point(scanner) : kind === "POLYGON" ? polygon(scanner) : undefined;
  return geometry !== undefined && scanner.atEnd() ? geometry : undefined;
}
