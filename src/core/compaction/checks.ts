/**
 * Deciding whether and where to queue an object: the staleness and ignore
 * rules, the bounded number of info fetches in flight (the rest wait in a
 * bounded de-duplicating FIFO), and the choice of the first channel, in
 * configured order, that gives the object a non-zero priority.
 */
import { channelsFor } from "./config.js";
import { placeInChannel, removeFromQueues } from "./channel.js";
import { describeObject, objectKey } from "./object.js";
import { channelPriority } from "./priority.js";
import { bump, emit, isIgnored, log, takeId, update, type Draft, type PendingListing } from "./state.js";
import type { CompactionObject, DbName, ListPurpose, ObjectInfo } from "./types.js";

export interface CheckOptions {
  /** Operator enqueue or a due retry: skip staleness and back-off. */
  readonly force: boolean;
}

const emitFetch = (d: Draft, object: CompactionObject): void => {
  const requestId = takeId(d);
  const fetches = new Map(d.state.fetches);
  fetches.set(requestId, object);
  const fetchingKeys = new Map(d.state.fetchingKeys);
  fetchingKeys.set(objectKey(object), requestId);
  update(d, { fetches, fetchingKeys });
  emit(d, { type: "fetch-info", requestId, object, purpose: "enqueue" });
};

/** An object changed (or someone asked): fetch its info, now or when a fetch slot frees up. */
export const requestCheck = (d: Draft, object: CompactionObject, options: CheckOptions): void => {
  const s = d.state;
  if (isIgnored(s, object)) return;
  if (channelsFor(s.config, object.kind).length === 0) return;
  const key = objectKey(object);
  // Running or starting objects are not queued (CouchDB's add_to_queue).
  if (s.runningKeys.has(key)) return;
  if (s.fetchingKeys.has(key)) {
    if (options.force) update(d, { recheckKeys: new Set(s.recheckKeys).add(key) });
    return;
  }
  if (s.pendingChecks.has(key)) return;
  if (!options.force) {
    // In back-off: the retry will check it; an update must not cut the wait short (#3571).
    if (s.retries.timeOf(key) !== undefined) return;
    const checkedAtMs = s.checkedAt.timeOf(key);
    if (checkedAtMs !== undefined && d.nowMs - checkedAtMs <= s.config.stalenessMinutes * 60_000) return;
  }
  update(d, {
    // Bounded: forgetting the oldest only means it may be checked again early.
    checkedAt: s.checkedAt.set(key, d.nowMs, true).truncate(s.config.maxPendingChecks),
    retries: s.retries.delete(key),
  });
  if (d.state.fetches.size < s.config.maxInfoRequests) {
    emitFetch(d, object);
    return;
  }
  const { fifo, result } = d.state.pendingChecks.push(key, object);
  if (result === "full") {
    bump(d, "droppedAtCapacity");
    update(d, { checkedAt: d.state.checkedAt.delete(key) });
    log(d, "warn", "smoosh: too many objects waiting to be checked, dropped", {
      object: describeObject(object),
      limit: fifo.limit,
    });
    return;
  }
  update(d, { pendingChecks: fifo });
};

/** Start waiting checks while fetch slots are free. */
export const pumpChecks = (d: Draft): void => {
  while (d.state.fetches.size < d.state.config.maxInfoRequests) {
    const next = d.state.pendingChecks.shift();
    if (next === undefined) return;
    update(d, { pendingChecks: next.fifo });
    if (!isIgnored(d.state, next.value) && !d.state.runningKeys.has(next.key)) emitFetch(d, next.value);
  }
};

/** The answer to an enqueue check: queue it in the first channel that takes it. */
export const onCheckAnswered = (d: Draft, requestId: number, info: ObjectInfo | "missing" | { error: string }): void => {
  const object = d.state.fetches.get(requestId);
  if (object === undefined) return;
  const key = objectKey(object);
  const again = d.state.recheckKeys.has(key);
  placeAnswered(d, requestId, object, key, info);
  if (again) {
    const recheckKeys = new Set(d.state.recheckKeys);
    recheckKeys.delete(key);
    update(d, { recheckKeys });
    requestCheck(d, object, { force: true });
  }
};

const placeAnswered = (
  d: Draft,
  requestId: number,
  object: CompactionObject,
  key: string,
  info: ObjectInfo | "missing" | { error: string },
): void => {
  const fetches = new Map(d.state.fetches);
  fetches.delete(requestId);
  const fetchingKeys = new Map(d.state.fetchingKeys);
  fetchingKeys.delete(key);
  update(d, { fetches, fetchingKeys });
  if (info === "missing") {
    removeFromQueues(d, key);
    log(d, "debug", "smoosh: object no longer exists", { object: describeObject(object) });
    return;
  }
  if ("error" in info) {
    // Checked again at its next update (or rescan); staleness memory dropped so that is not delayed.
    update(d, { checkedAt: d.state.checkedAt.delete(key) });
    log(d, "warn", "smoosh: could not fetch info", { object: describeObject(object), error: info.error });
    return;
  }
  if (info.kind !== object.kind) {
    log(d, "error", "smoosh: info of the wrong kind, ignored", { object: describeObject(object), kind: info.kind });
    return;
  }
  if (isIgnored(d.state, object) || d.state.runningKeys.has(key)) return;
  for (const name of channelsFor(d.state.config, object.kind)) {
    const channel = d.state.channels.get(name);
    if (channel === undefined) continue;
    const priority = channelPriority(channel.config, info);
    if (priority > 0) {
      removeFromQueues(d, key, name);
      placeInChannel(d, name, object, priority);
      return;
    }
  }
  // No channel wants it any more: an older entry must not linger at a stale priority.
  removeFromQueues(d, key);
};

// --- listings (enqueue_all, rescan) -----------------------------------------

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

export const onListingDone = (d: Draft, db: DbName, purpose: ListPurpose): void => {
  const listingsInFlight = new Map(d.state.listingsInFlight);
  listingsInFlight.delete(listingKey({ db, purpose }));
  update(d, { listingsInFlight });
};

/** All dbs listed: operator scopes are forced (skip staleness), rescans are not. */
export const onDbsListed = (d: Draft, purpose: ListPurpose, dbs: readonly DbName[]): void => {
  for (const db of dbs) {
    if (purpose === "enqueue-all-dbs") requestCheck(d, { kind: "db", db }, { force: true });
    else if (purpose === "enqueue-all-views") requestListing(d, db, purpose);
    else {
      requestCheck(d, { kind: "db", db }, { force: false });
      requestListing(d, db, purpose);
    }
  }
};

export const onDesignDocsListed = (d: Draft, purpose: ListPurpose, db: DbName, ddocs: readonly string[]): void => {
  onListingDone(d, db, purpose);
  for (const ddoc of ddocs) {
    requestCheck(d, { kind: "view", db, ddoc }, { force: purpose === "enqueue-all-views" });
  }
};
