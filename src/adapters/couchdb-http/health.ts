/**
 * Reachability of the server, shared by the store and the event source.
 * Logs once per change (up -> down, down -> up), never once per request.
 */
import type { Logger } from "../../ports/shell.js";

export interface HealthSnapshot {
  readonly reachable: boolean;
  /** When the current state began (scheduler ms). */
  readonly sinceMs: number;
  /** Why it is down (redacted). */
  readonly lastError?: string | undefined;
}

export class Health {
  private reachable = true;
  private sinceMs: number;
  private lastError: string | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly serverLabel: string,
    nowMs: number,
  ) {
    this.sinceMs = nowMs;
  }

  markUp(nowMs: number): void {
    if (this.reachable) return;
    const downForMs = nowMs - this.sinceMs;
    this.reachable = true;
    this.sinceMs = nowMs;
    this.lastError = undefined;
    this.logger.info({ server: this.serverLabel, downForMs }, "CouchDB server reachable again");
  }

  markDown(nowMs: number, error: string): void {
    this.lastError = error;
    if (!this.reachable) return;
    this.reachable = false;
    this.sinceMs = nowMs;
    this.logger.warn({ server: this.serverLabel, error }, "CouchDB server unreachable; retrying in the background");
  }

  snapshot(): HealthSnapshot {
    return { reachable: this.reachable, sinceMs: this.sinceMs, lastError: this.lastError };
  }
}
