/**
 * What `/_db_updates` needs from the feed: read pages of the feed db, know
 * its seq, and wait for new rows. The runtime's db updates service provides
 * it; the HTTP layer depends only on this.
 */
import type { ChangeRow } from "../../ports/store.js";

export interface FeedPage {
  readonly results: readonly ChangeRow[];
  readonly lastSeq: string;
}

export interface ReadChangesQuery {
  readonly since?: string | undefined;
  readonly limit?: number | undefined;
  readonly descending?: boolean | undefined;
}

export type WaitResult = "changed" | "timeout" | "stopped" | "aborted";

export interface DbUpdatesFeed {
  /** One page of the feed db's changes (raw rows; the HTTP layer transforms them per viewer). */
  readChanges(query: ReadChangesQuery): Promise<FeedPage>;
  currentSeq(): Promise<string>;
  /** Called after every successful write. Returns an unsubscribe function; undefined when at its subscriber bound. */
  subscribe(listener: () => void): (() => void) | undefined;
  /** Resolves `changed` once the feed has rows after `since`, else `timeout` (or `stopped`, `aborted`). */
  waitForChange(since: string, timeoutMs: number, signal?: AbortSignal): Promise<WaitResult>;
}
