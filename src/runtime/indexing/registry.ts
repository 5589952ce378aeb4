/**
 * The registered index backends (the RFC's `fabric2_index:register/1`): at
 * most one per type; each is started once (`start()`: learn what the server
 * can do) before it is used, and again after a failed start. A backend that
 * throws anywhere is logged and the others go on.
 */
import { errorText } from "../../core/shared/error-text.js";
import type { IndexBackend } from "../../ports/index-backend.js";
import type { Logger } from "../../ports/shell.js";

export interface BackendRegistry {
  register(backend: IndexBackend): void;
  byType(type: string): IndexBackend | undefined;
  all(): readonly IndexBackend[];
  /** Every backend started (or its start failed, logged): call before using them. */
  ready(): Promise<void>;
}

export function createBackendRegistry(logger: Logger, initial: readonly IndexBackend[] = []): BackendRegistry {
  const backends = new Map<string, IndexBackend>();
  const started = new Map<string, Promise<void>>();
  const start = (backend: IndexBackend): Promise<void> => {
    const known = started.get(backend.type);
    if (known !== undefined) return known;
    const starting = (backend.start?.() ?? Promise.resolve()).catch((error: unknown) => {
      started.delete(backend.type);
      logger.warn({ backend: backend.type, err: errorText(error) }, "ken: a backend could not start; tried again on next use");
    });
    started.set(backend.type, starting);
    return starting;
  };
  const registry: BackendRegistry = {
    register(backend) {
      if (backends.has(backend.type)) logger.warn({ backend: backend.type }, "ken: a backend of this type was registered already; replaced");
      backends.set(backend.type, backend);
      started.delete(backend.type);
    },
    byType: (type) => backends.get(type),
    all: () => [...backends.values()],
    async ready() {
      await Promise.all([...backends.values()].map(start));
    },
  };
  for (const backend of initial) registry.register(backend);
  return registry;
}
