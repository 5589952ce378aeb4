/**
 * About how many bytes a JSON value takes as text, for the index size model:
 * exact for numbers, booleans, null and ASCII strings without escapes, close
 * otherwise (a non-ASCII character counts one, an escape none). Walks the
 * value instead of stringifying it: an index build sizes every row, and
 * `JSON.stringify` there was a tenth of the build's CPU.
 */
export function jsonSize(value: unknown): number {
  switch (typeof value) {
    case "string":
      return value.length + 2;
    case "number":
      return Number.isInteger(value) && Math.abs(value) < 1e15 ? integerDigits(value) : String(value).length;
    case "boolean":
      return value ? 4 : 5;
    case "object": {
      if (value === null) return 4;
      if (Array.isArray(value)) {
        let size = 1 + Math.max(1, value.length);
        for (const item of value) size += jsonSize(item);
        return size;
      }
      let size = 1;
      let fields = 0;
      for (const name in value) {
        if (!Object.prototype.hasOwnProperty.call(value, name)) continue;
        size += name.length + 3 + jsonSize((value as Record<string, unknown>)[name]);
        fields++;
      }
      return size + Math.max(1, fields);
    }
    default:
      // undefined, functions: JSON has null in their place.
      return 4;
  }
}

const integerDigits = (n: number): number => {
  let digits = n < 0 ? 2 : 1;
  for (let rest = Math.abs(n); rest >= 10; rest = Math.floor(rest / 10)) digits++;
  return digits;
};
