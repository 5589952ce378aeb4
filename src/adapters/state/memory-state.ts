/**
 * StatePort in memory: for tests, simulations and embedders that persist
 * nothing. Values are deep-copied through JSON both ways, so callers see the
 * same "saved then loaded" semantics (and the same failures on non-JSON
 * values) as with the file port.
 */
import type { StatePort } from "../../ports/shell.js";

export interface MemoryStatePort extends StatePort {
  /** Keys saved so far (sorted). */
  keys(): string[];
}

export function createMemoryStatePort(initial: Readonly<Record<string, unknown>> = {}): MemoryStatePort {
  const saved = new Map<string, string>();
  for (const [key, value] of Object.entries(initial)) saved.set(key, JSON.stringify(value));
  return {
    async load(key) {
      const text = saved.get(key);
      return text === undefined ? undefined : (JSON.parse(text) as unknown);
    },
    async save(key, value) {
      const text = JSON.stringify(value);
      if (text === undefined) throw new Error(`state ${JSON.stringify(key)}: value is not JSON-serialisable`);
      saved.set(key, text);
    },
    keys: () => [...saved.keys()].sort(),
  };
}
