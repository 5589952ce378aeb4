/**
 * Loggers that do not print: a recording one for tests and embedders that
 * assert on what was logged without parsing stdout, and a silent one.
 */
import type { Logger } from "../../ports/shell.js";

export interface LogLine {
  readonly level: "debug" | "info" | "warn" | "error";
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

export interface RecordingLogger extends Logger {
  /** Every line logged so far (oldest first, at most `maxLines`). */
  readonly lines: readonly LogLine[];
  /** Lines whose message contains `text`. */
  find(text: string): LogLine[];
  /** Every line as text (`level msg {fields}`), for failure messages and "never logged" checks. */
  text(): string;
}

/**
 * A silent logger that keeps what it is told, for tests. Bounded: beyond
 * `maxLines` the oldest lines are dropped.
 */
export function createRecordingLogger(maxLines = 10_000, bindings: Readonly<Record<string, unknown>> = {}): RecordingLogger {
  const lines: LogLine[] = [];
  const make = (bound: Readonly<Record<string, unknown>>): RecordingLogger => {
    const record =
      (level: LogLine["level"]) =>
      (fields: object, msg: string): void => {
        lines.push({ level, msg, fields: { ...bound, ...(fields as Record<string, unknown>) } });
        if (lines.length > maxLines) lines.splice(0, lines.length - maxLines);
      };
    return {
      lines,
      debug: record("debug"),
      info: record("info"),
      warn: record("warn"),
      error: record("error"),
      child: (more: object) => make({ ...bound, ...(more as Record<string, unknown>) }),
      find: (text: string) => lines.filter((line) => line.msg.includes(text)),
      text: () => lines.map((l) => `${l.level} ${l.msg} ${JSON.stringify(l.fields)}`).join("\n"),
    };
  };
  return make(bindings);
}

/** A logger that drops everything. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
