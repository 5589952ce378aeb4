/**
 * Listings for enqueue_all and rescans: all dbs, then each db's design docs
 * (at most `max_info_requests` listings at once; the rest wait in bounded
 * FIFOs). Operator scopes are served at once and force the checks that
 * follow. Rescans spend the check budget (one token a listing) and list only
 * dbs that had design docs when last listed, or were never listed nor heard
 * created (a new db has none; later ones come as design doc events): a server
 * of 100,000 dbs without views is not asked 100,000 times an hour.
 */
import { backgroundCheck, forceCheck, noteBackgroundToken, takeToken } from "./checks.js";
import { BoundedFifo } from "../shared/persistent.js";
import { bump, emit, log, update, type Draft, type PendingListing } from "./state.js";
import type { CompactionObject, DbName, ListPurpose } from "./types.js";

const listingKey = (l: PendingListing): string => `${l.purpose}\u0000${l.db}`;

const emitListing = (d: Draft, listing: PendingListing): void => {
  const listingsInFlight = new Map(d.state.listingsInFlight);
  listingsInFlight.set(listingKey(listing), listing);
  update(d, { listingsInFlight });
  emit(d, { type: "list-design-docs", db: listing.db, purpose: listing.purpose });
};

/** Ask for a db's design docs, at most `max_info_requests` listings at once. */
export const requestListing = (d: Draft, db: DbName, purpose: ListPurpose): void => {
  const listing = { db, purpose };
  const key = listingKey(listing);
  if (d.state.ignored.has(db) || d.state.listingsInFlight.has(key)) return;
  if (d.state.listingsInFlight.size < d.state.config.maxInfoRequests && d.state.pendingListings.size === 0) {
    emitListing(d, listing);
    return;
  }
  const { fifo, result } = d.state.pendingListings.push(key, listing);
  if (result === "full") {
    bump(d, "droppedAtCapacity");
    log(d, "warn", "smoosh: too many dbs waiting for their design docs to be listed, dropped", { db, purpose });
    return;
  }
  update(d, { pendingListings: fifo });
};

export const pumpListings = (d: Draft): void => {
  while (d.state.listingsInFlight.size < d.state.config.maxInfoRequests) {
    const next = d.state.pendingListings.shift();
    if (next === undefined) return;
    update(d, { pendingListings: next.fifo });
    if (!d.state.ignored.has(next.value.db)) emitListing(d, next.value);
  }
};

/** A rescan's listings, under the budget. */
export const pumpRescanListings = (d: Draft): void => {
  while (d.state.listingsInFlight.size < d.state.config.maxInfoRequests && d.state.rescanListings.size > 0 && takeToken(d)) {
    const next = d.state.rescanListings.shift()!;
    noteBackgroundToken(d);
    update(d, { rescanListings: next.fifo });
    const listing = { db: next.value, purpose: "rescan" as const };
    if (!d.state.ignored.has(listing.db) && !d.state.listingsInFlight.has(listingKey(listing))) emitListing(d, listing);
  }
};

/** Whether a rescan should list `db`'s design docs: it had some, or was never listed (nor heard created, empty). */
const worthListing = (d: Draft, db: DbName): boolean => (d.state.ddocCounts.get(db) ?? 1) > 0;

const requestRescanListing = (d: Draft, db: DbName): void => {
  if (d.state.ignored.has(db) || !worthListing(d, db)) return;
  const { fifo, result } = d.state.rescanListings.push(db, db);
  if (result === "full") {
    bump(d, "droppedAtCapacity");
    log(d, "warn", "smoosh: too many dbs waiting for their design docs to be listed, dropped", { db, purpose: "rescan" });
    return;
  }
  update(d, { rescanListings: fifo });
};

/** How many design docs (and geo index files) `db` has, as last learnt: rescans list only dbs with some. */
const noteDesignDocs = (d: Draft, db: DbName, count: number): void => {
  const counts = d.state.ddocCounts;
  // Bounded: a db not remembered is simply listed again at the next rescan.
  if (!counts.has(db) && counts.size >= d.state.config.maxPendingChecks) return;
  update(d, { ddocCounts: counts.set(db, count) });
};

/**
 * A db was heard created: it had no design docs then, and any written since
 * come as design doc events (the stores' event sources list a new db's once
 * it has documents), so rescans skip it as a db once listed with none.
 */
export const noteDbCreated = (d: Draft, db: DbName): void => {
  if (!d.state.ddocCounts.has(db)) noteDesignDocs(d, db, 0);
};

/** A design doc was written: the db has design docs (its next rescan lists them). */
export const noteDesignDocWritten = (d: Draft, db: DbName): void => {
  if ((d.state.ddocCounts.get(db) ?? 0) === 0) noteDesignDocs(d, db, 1);
};

export const onListingDone = (d: Draft, db: DbName, purpose: ListPurpose): void => {
  const listingsInFlight = new Map(d.state.listingsInFlight);
  listingsInFlight.delete(listingKey({ db, purpose }));
  update(d, { listingsInFlight });
};

export const emptyListings = (limit: number): BoundedFifo<PendingListing> => BoundedFifo.empty(limit);

/** All dbs listed: operator scopes are forced, rescans go to the background. */
export const onDbsListed = (d: Draft, purpose: ListPurpose, dbs: readonly DbName[]): void => {
  for (const db of dbs) {
    if (purpose === "enqueue-all-dbs") forceCheck(d, { kind: "db", db });
    else if (purpose === "enqueue-all-views") requestListing(d, db, purpose);
    else {
      backgroundCheck(d, { kind: "db", db });
      requestRescanListing(d, db);
    }
  }
};

/** A db's view groups and geo index files: operator scopes force their checks, rescans queue them in the background. */
export const onDesignDocsListed = (
  d: Draft,
  purpose: ListPurpose,
  db: DbName,
  ddocs: readonly string[],
  geoSignatures: readonly string[],
): void => {
  onListingDone(d, db, purpose);
  // Geo files count too: a stale one (its design doc gone) is still listed at the next rescan.
  noteDesignDocs(d, db, ddocs.length + geoSignatures.length);
  const objects: CompactionObject[] = [
    ...ddocs.map((ddoc) => ({ kind: "view" as const, db, ddoc })),
    ...geoSignatures.map((signature) => ({ kind: "geo" as const, db, signature })),
  ];
  for (const object of objects) {
    if (purpose === "enqueue-all-views") forceCheck(d, object);
    else backgroundCheck(d, object);
  }
};
