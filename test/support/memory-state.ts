/** A StatePort in a Map (tests; JSON round-trip so nothing is shared by reference). */
import type { StatePort } from "../../src/ports/shell.js";

export const memoryState = (): StatePort & { data: Map<string, string> } => {
  const data = new Map<string, string>();
  return {
    data,
    load: async (key) => {
      const v = data.get(key);
      return v === undefined ? undefined : (JSON.parse(v) as unknown);
    },
    save: async (key, value) => {
      data.set(key, JSON.stringify(value));
    },
  };
};
