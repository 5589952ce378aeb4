/**
 * Where `upholster run` writes its logs, and how: human-readable lines
 * (pino-pretty) for a person at a terminal, JSON lines (one object per
 * decision) for everything else — files, pipes, log collectors.
 * `--log-format` / `[upholster] log_format`: `auto` (the default) picks by
 * whether stdout is a terminal.
 */
import { PinoPretty } from "pino-pretty";
import { createPinoLogger } from "../adapters/logging/index.js";
import type { LogFormat } from "../config/upholster-section.js";
import type { Logger, LogLevelName } from "../ports/shell.js";

export const resolveLogFormat = (format: LogFormat, stdoutIsTerminal: boolean): "pretty" | "json" =>
  format === "auto" ? (stdoutIsTerminal ? "pretty" : "json") : format;

export function createCliLogger(level: LogLevelName, format: "pretty" | "json", colorize: boolean): Logger {
  if (format === "json") return createPinoLogger({ level });
  // One line per decision, as the JSON; synchronous like the JSON destination: `run` ends with process.exit(), which must not cut the last lines.
  const destination = PinoPretty({ sync: true, colorize, singleLine: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname,name" });
  return createPinoLogger({ level, destination });
}
