/**
 * Production logs: pino JSON lines on stdout, one structured line per decision.
 */
import { pino } from "pino";
import type { Logger, LogLevelName } from "../../ports/shell.js";

export interface PinoLoggerOptions {
  readonly level?: LogLevelName;
  /** Where lines go; stdout by default (a pino destination, or any `{ write(line) }`). */
  readonly destination?: pino.DestinationStream;
  /** Bound into every line, e.g. `{ service: "upholster" }`. */
  readonly bindings?: Readonly<Record<string, unknown>>;
}

/** pino to stdout (or a given stream). pino's API is the port's superset, so it is returned as is. */
export function createPinoLogger(options: PinoLoggerOptions = {}): Logger {
  const base = pino(
    { level: options.level ?? "info", base: { name: "upholster", ...options.bindings } },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
  return base as unknown as Logger;
}

