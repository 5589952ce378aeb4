/** A Logger that keeps its lines, for asserting on what was (and was not) logged. */
import type { Logger } from "../../src/ports/shell.js";

export interface LogLine {
  readonly level: "debug" | "info" | "warn" | "error";
  readonly fields: object;
  readonly msg: string;
}

export const captureLogger = (): Logger & { lines: LogLine[]; text(): string } => {
  const lines: LogLine[] = [];
  const at = (level: LogLine["level"]) => (fields: object, msg: string) => {
    lines.push({ level, fields, msg });
  };
  return {
    lines,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    text: () => lines.map((l) => `${l.level} ${l.msg} ${JSON.stringify(l.fields)}`).join("\n"),
  };
};
