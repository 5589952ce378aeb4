/**
 * Store events arrive one per write; the core wants them in batches. Updates
 * heard during one synchronous burst (a bulk write, a feed chunk) become one
 * `objects-updated` step a microtask later, with a count per object, so a
 * busy store costs the core one step per burst, not per write. Any other
 * event first flushes what is pending, so order between kinds is kept.
 */
import { objectKey, type CompactionObject, type SmooshEvent } from "../../core/compaction/index.js";
import type { StoreEvent } from "../../ports/events.js";
import { storeEventToSmooshEvent } from "./store-events.js";

export interface UpdateCoalescer {
  handle(event: StoreEvent): void;
  /** An update of an object no store event names (a geo index file grew). */
  noteUpdate(object: CompactionObject): void;
  /** Deliver what is pending now (before stopping, or before a forced event). */
  flush(): void;
}

export function createUpdateCoalescer(dispatch: (event: SmooshEvent) => void): UpdateCoalescer {
  let pending: Map<string, { object: CompactionObject; count: number }> | undefined;
  const flush = (): void => {
    const updates = pending;
    pending = undefined;
    if (updates !== undefined && updates.size > 0) dispatch({ type: "objects-updated", updates: [...updates.values()] });
  };
  const add = (object: CompactionObject): void => {
    if (pending === undefined) {
      pending = new Map();
      queueMicrotask(flush);
    }
    const key = objectKey(object);
    const entry = pending.get(key);
    if (entry === undefined) pending.set(key, { object, count: 1 });
    else entry.count += 1;
  };
  return {
    handle(event) {
      const smooshEvent = storeEventToSmooshEvent(event);
      if (smooshEvent.type === "object-updated" && smooshEvent.force !== true) return add(smooshEvent.object);
      flush();
      dispatch(smooshEvent);
    },
    noteUpdate: add,
    flush,
  };
}
