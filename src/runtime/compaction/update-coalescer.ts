/**
 * Store events arrive one per write; the core wants them in batches. Updates
 * heard until the scheduler's next turn (a zero-delay timer: a bulk write, a
 * feed chunk, every view pass due at that moment) become one
 * `objects-updated` step with a count per object, so a busy store costs the
 * core one step per burst, not per write. A microtask was too short a burst:
 * each timer's writes came alone, and a simulation made 3 core steps per
 * second of updates where one does. Any other event first flushes what is
 * pending, so order between kinds is kept.
 */
import { objectKey, type CompactionObject, type SmooshEvent } from "../../core/compaction/index.js";
import type { StoreEvent } from "../../ports/events.js";
import type { CancelTimer, Timers } from "../../ports/shell.js";
import { storeEventToSmooshEvent } from "./store-events.js";

export interface UpdateCoalescer {
  handle(event: StoreEvent): void;
  /** An update of an object no store event names (a geo index file grew). */
  noteUpdate(object: CompactionObject): void;
  /** Deliver what is pending now (before stopping, or before a forced event). */
  flush(): void;
}

interface PendingUpdate {
  readonly object: CompactionObject;
  count: number;
}

/** One burst's updates, in the order first heard. */
interface Burst {
  readonly updates: PendingUpdate[];
  /** Db updates by db name: a db-updated event (most of them) needs no object or key made to be counted. */
  readonly dbs: Map<string, PendingUpdate>;
  /** Other objects by `objectKey`. */
  readonly others: Map<string, PendingUpdate>;
}

export function createUpdateCoalescer(dispatch: (event: SmooshEvent) => void, timers: Timers): UpdateCoalescer {
  let pending: Burst | undefined;
  let cancelFlush: CancelTimer | undefined;
  const flush = (): void => {
    cancelFlush?.();
    cancelFlush = undefined;
    const burst = pending;
    pending = undefined;
    if (burst !== undefined && burst.updates.length > 0) dispatch({ type: "objects-updated", updates: burst.updates });
  };
  /** The timer has fired: nothing to cancel (a virtual scheduler would look for it among all its timers). */
  const flushFromTimer = (): void => {
    cancelFlush = undefined;
    flush();
  };
  const burst = (): Burst => {
    if (pending === undefined) {
      pending = { updates: [], dbs: new Map(), others: new Map() };
      cancelFlush = timers.setTimeout(flushFromTimer, 0);
    }
    return pending;
  };
  /** Counts one more update of the object under `key`, if the burst has it already. */
  const counted = (byKey: Map<string, PendingUpdate>, key: string): boolean => {
    const entry = byKey.get(key);
    if (entry !== undefined) entry.count += 1;
    return entry !== undefined;
  };
  const append = (updates: PendingUpdate[], byKey: Map<string, PendingUpdate>, key: string, object: CompactionObject): void => {
    const added: PendingUpdate = { object, count: 1 };
    byKey.set(key, added);
    updates.push(added);
  };
  /** A db's update, counted by its name: its object (`object`, or made here) only once per burst. */
  const addDb = (db: string, object?: CompactionObject): void => {
    const { updates, dbs } = burst();
    if (!counted(dbs, db)) append(updates, dbs, db, object ?? { kind: "db", db });
  };
  const add = (object: CompactionObject): void => {
    if (object.kind === "db") return addDb(object.db, object);
    const { updates, others } = burst();
    const key = objectKey(object);
    if (!counted(others, key)) append(updates, others, key, object);
  };
  return {
    handle(event) {
      // The usual event: no object made per write.
      if (event.type === "db-updated") return addDb(event.db);
      const smooshEvent = storeEventToSmooshEvent(event);
      if (smooshEvent.type === "object-updated" && smooshEvent.force !== true) return add(smooshEvent.object);
      flush();
      dispatch(smooshEvent);
    },
    noteUpdate: add,
    flush,
  };
}
