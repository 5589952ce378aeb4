/**
 * When to list a db's design docs again after it was written (the CouchDB
 * event source: `_db_updates` says "updated", never "a design doc changed").
 * Listing after every update cost one request per write (2,065 of 2,124
 * requests in bench:churn); the rule:
 *
 * - a db that has no design docs can only gain one by gaining a document, so
 *   it is listed again only when its `doc_count` rose (an info the adapter
 *   already has, or one batched `_dbs_info` for many dbs);
 * - a db is listed at most once per interval, which doubles each time a
 *   listing finds nothing changed (up to a cap) and falls back to the
 *   minimum when something did: busy dbs with stable design docs cost a
 *   request a minute, a design doc change is seen within the minimum.
 *
 * Pure: the adapter keeps the memory and the clock and asks.
 */

export interface DdocCheckMemory {
  readonly lastListedAtMs: number;
  readonly intervalMs: number;
  readonly ddocCount: number;
  /** `doc_count` when last listed: a db without design docs needs more documents to have one now. */
  readonly docCountAtListing: number;
}

export interface DdocCheckSettings {
  readonly minIntervalMs: number;
  readonly maxIntervalMs: number;
}

export type DdocCheckDecision =
  | { readonly kind: "list" }
  | { readonly kind: "wait"; readonly untilMs: number }
  /** No design docs last time: is `doc_count` higher now? The adapter finds out (cheaply), then asks `afterCount`. */
  | { readonly kind: "need-doc-count" };

/** A db written at some point: list now, wait, or first look at its doc count. */
export const decideDdocCheck = (memory: DdocCheckMemory | undefined, settings: DdocCheckSettings, nowMs: number): DdocCheckDecision => {
  if (memory === undefined) return { kind: "list" };
  const dueMs = memory.lastListedAtMs + memory.intervalMs;
  if (nowMs < dueMs) return { kind: "wait", untilMs: dueMs };
  return memory.ddocCount === 0 ? { kind: "need-doc-count" } : { kind: "list" };
};

/** With the db's `doc_count` known: list only if documents were added since the last listing. */
export const afterDocCount = (memory: DdocCheckMemory, docCount: number): DdocCheckDecision =>
  docCount > memory.docCountAtListing ? { kind: "list" } : { kind: "wait", untilMs: memory.lastListedAtMs + memory.intervalMs };

/** What a listing teaches: back off when nothing changed, start over when something did. */
export const afterListing = (
  memory: DdocCheckMemory | undefined,
  settings: DdocCheckSettings,
  listing: { readonly changed: boolean; readonly ddocCount: number; readonly docCount: number | undefined },
  nowMs: number,
): DdocCheckMemory => ({
  lastListedAtMs: nowMs,
  intervalMs: listing.changed || memory === undefined ? settings.minIntervalMs : Math.min(settings.maxIntervalMs, memory.intervalMs * 2),
  ddocCount: listing.ddocCount,
  docCountAtListing: listing.docCount ?? memory?.docCountAtListing ?? 0,
});
