/**
 * What one index update pass tells the logger: map functions that failed on
 * documents (the document is skipped for that view; CouchDB logs it the
 * same way), functions stopped by the sandbox's limits, and the functions'
 * own `log()` lines. Bounded: a map that throws on a million documents
 * logs its first few failures and then one count, not a million lines.
 */
import type { Logger } from "../../../ports/shell.js";
import type { FunctionFailureKind } from "../../../ports/sandbox.js";

const FAILURES_LOGGED_PER_MAP = 10;
const USER_LINES_LOGGED = 100;

export interface PassFields {
  readonly db: string;
  readonly signature: string;
  readonly ddocs: readonly string[];
}

export class PassLog {
  /** Made on the first failure: most passes have none. */
  private failuresPerMap: Map<number, number> | undefined;
  private userLines = 0;

  constructor(
    private readonly logger: Logger,
    private readonly fields: PassFields,
  ) {}

  mapFailed(map: number, views: readonly string[], docId: string, kind: FunctionFailureKind, error: string): void {
    const failures = (this.failuresPerMap ??= new Map());
    const count = (failures.get(map) ?? 0) + 1;
    failures.set(map, count);
    if (count > FAILURES_LOGGED_PER_MAP) return;
    const fields = { ...this.fields, views, docId, kind, error };
    if (kind === "exception") this.logger.info(fields, "a map function failed on a document; the document is left out of its views");
    else this.logger.warn(fields, "a map function was stopped on a document; the document is left out of its views");
  }

  mapStopped(views: readonly string[], reason: string): void {
    this.logger.warn({ ...this.fields, views, reason }, "a map function no longer runs: queries of its views fail until the design doc changes");
  }

  userLog(docId: string, lines: readonly string[]): void {
    for (const line of lines) {
      this.userLines++;
      if (this.userLines <= USER_LINES_LOGGED) this.logger.info({ ...this.fields, docId, line }, "map function log");
    }
  }

  /** One line per map whose failures were not all logged, and for the log lines dropped. */
  finish(viewsOf: (map: number) => readonly string[]): void {
    for (const [map, count] of this.failuresPerMap ?? []) {
      if (count > FAILURES_LOGGED_PER_MAP) this.logger.info({ ...this.fields, views: viewsOf(map), failures: count }, "a map function failed on more documents than were logged");
    }
    if (this.userLines > USER_LINES_LOGGED) this.logger.info({ ...this.fields, lines: this.userLines }, "map function log lines were dropped past the first ones of this update");
  }
}
