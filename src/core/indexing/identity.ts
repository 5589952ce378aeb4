/**
 * Stable identities for index definitions: equal JSON (whatever the order
 * of object keys) gives an equal digest. Not cryptographic: it names an
 * index among the few a db has, it does not protect anything.
 */

/** JSON with object keys sorted at every level. */
export const stableJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
};

/** 64 bits as 16 hex digits: two differently seeded 32-bit FNV-1a passes with a murmur3 finish. */
export const digestOf = (value: unknown): string => {
  const text = stableJson(value);
  return `${hash32(text, 0x811c9dc5)}${hash32(text, 0x01000193 ^ 0x9e3779b9)}`;
};

const hash32 = (text: string, seed: number): string => {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0).toString(16).padStart(8, "0");
};
