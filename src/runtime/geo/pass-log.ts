/**
 * What a geo update pass tells the logger: documents skipped (the index
 * function threw, was stopped on them, or passed an invalid geometry), an
 * index function stopped for good, the functions' own `log()` lines.
 * Bounded per pass: a function that throws on a million documents logs its
 * first few and then one count.
 */
import type { Logger } from "../../ports/shell.js";

const SKIPS_LOGGED_PER_PASS = 10;
const USER_LINES_LOGGED = 100;

export interface GeoPassFields {
  readonly db: string;
  readonly signature: string;
  readonly ddocs: readonly string[];
}

export class GeoPassLog {
  private skips = 0;
  private userLines = 0;

  constructor(
    private readonly logger: Logger,
    private readonly fields: GeoPassFields,
  ) {}

  /** `kind`: exception, timeout, memory, or `geometry` (an invalid st_index argument). */
  docSkipped(docId: string, kind: string, reason: string): void {
    this.skips++;
    if (this.skips > SKIPS_LOGGED_PER_PASS) return;
    const fields = { ...this.fields, docId, kind, reason };
    if (kind === "timeout" || kind === "memory") this.logger.warn(fields, "an st_index function was stopped on a document; the document is left out of the geo index");
    else this.logger.info(fields, "a document is left out of its geo index");
  }

  functionStopped(reason: string): void {
    this.logger.warn({ ...this.fields, reason }, "an st_index function no longer runs: its geo index stays where it is and its queries fail until the design doc changes");
  }

  userLog(docId: string, lines: readonly string[]): void {
    for (const line of lines) {
      this.userLines++;
      if (this.userLines <= USER_LINES_LOGGED) this.logger.info({ ...this.fields, docId, line }, "st_index function log");
    }
  }

  finish(): void {
    if (this.skips > SKIPS_LOGGED_PER_PASS) this.logger.info({ ...this.fields, skipped: this.skips }, "more documents were left out of the geo index than were logged");
    if (this.userLines > USER_LINES_LOGGED) this.logger.info({ ...this.fields, lines: this.userLines }, "st_index function log lines were dropped past the first ones of this update");
  }
}
