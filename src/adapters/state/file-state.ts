/**
 * StatePort on the filesystem: one JSON file per key in `dir`.
 *
 * Saves are atomic (write a temp file, fsync, rename over the old one), so a
 * crash leaves either the old or the new value, never half of one. A file
 * that does not parse loads as `undefined` (the owner starts afresh and logs),
 * and is kept aside as `<key>.json.corrupt` for a human to look at.
 */
import { mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { StatePort } from "../../ports/shell.js";

export interface FileStatePortOptions {
  /** Told about a corrupt file that was set aside (the load then resolves `undefined`). */
  readonly onCorrupt?: ((key: string, path: string, error: unknown) => void) | undefined;
}

/** Keys become file names, one-to-one: anything outside `[A-Za-z0-9._-]` is percent-encoded, so no key escapes `dir`. */
export function stateFileName(key: string): string {
  const hex = (c: string): string => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `%${code.toString(16).padStart(2, "0").toUpperCase()}` : `%u${code.toString(16).padStart(4, "0").toUpperCase()}`;
  };
  const safe = key.replace(/[^A-Za-z0-9._-]/g, hex);
  // No hidden files ("", ".", "..", ".x"): a lone "%" cannot come from an encoded key, so "%" marks the empty key.
  if (safe === "") return "%.json";
  return `${safe.startsWith(".") ? `%2E${safe.slice(1)}` : safe}.json`;
}

export function createFileStatePort(dir: string, options: FileStatePortOptions = {}): StatePort {
  let ensured: Promise<unknown> | undefined;
  const ensureDir = (): Promise<unknown> => (ensured ??= mkdir(dir, { recursive: true }));
  // One sequence per key: two saves in flight must not race on the temp file or reorder.
  const queues = new Map<string, Promise<void>>();
  let tempCounter = 0;

  return {
    async load(key) {
      const path = join(dir, stateFileName(key));
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        await rename(path, `${path}.corrupt`).catch(() => {});
        options.onCorrupt?.(key, path, error);
        return undefined;
      }
    },

    save(key, value) {
      const text = JSON.stringify(value);
      if (text === undefined) return Promise.reject(new Error(`state ${JSON.stringify(key)}: value is not JSON-serialisable`));
      const path = join(dir, stateFileName(key));
      const previous = queues.get(key) ?? Promise.resolve();
      const next = previous.catch(() => {}).then(async () => {
        await ensureDir();
        const temp = `${path}.${process.pid}.${tempCounter++}.tmp`;
        try {
          const handle = await open(temp, "w");
          try {
            await handle.writeFile(text, "utf8");
            await handle.sync();
          } finally {
            await handle.close();
          }
          await rename(temp, path);
        } catch (error) {
          await unlink(temp).catch(() => {});
          throw error;
        }
      });
      queues.set(key, next);
      // Forget finished queues so the map stays bounded by the keys in flight.
      void next.catch(() => {}).then(() => {
        if (queues.get(key) === next) queues.delete(key);
      });
      return next;
    },
  };
}

function isMissing(error: unknown): boolean {
  return error !== null && typeof error === "object" && (error as { code?: unknown }).code === "ENOENT";
}
