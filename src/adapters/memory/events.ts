/**
 * The memory store's event hub: every write is announced, synchronously, to
 * every started event source (several subsystems listen at once). While the
 * store is marked unavailable, events are held in a bounded, de-duplicating
 * buffer and delivered when it comes back, as a reconnecting feed would.
 *
 * Named sources are durable subscriptions: the hub keeps a bounded log of
 * recent events and each name's position in it, so a source stopped and
 * started again under the same name (an embedded daemon restarting next to a
 * store that lives on) first replays what it missed, as CouchDB's
 * `_db_updates?since=` does. A position that fell off the log resyncs with one
 * `db-updated` per existing db: at-least-once, never a silent gap.
 */
import type { EventSource, EventSourceStatus, StoreEvent, StoreEventListener } from "../../ports/events.js";

export interface EventHubOptions {
  /** Events held while unavailable; beyond this the oldest are dropped (counted in `droppedEvents`). */
  readonly maxBufferedEvents?: number;
  /** Errors thrown by listeners: never allowed to fail the write that emitted. */
  readonly onListenerError?: (error: unknown, event: StoreEvent) => void;
  /** Recent events kept for named sources to replay. */
  readonly maxLoggedEvents?: number;
  /** What a named source gets when its position fell off the log: an update per existing db. */
  readonly resync?: () => readonly StoreEvent[];
}

export interface EventSourceOptions {
  /** A durable subscription: a later source with the same name resumes where this one stopped. */
  readonly name?: string;
}

const eventKey = (event: StoreEvent): string =>
  "ddoc" in event ? `${event.type}\u0000${event.db}\u0000${event.ddoc}` : `${event.type}\u0000${event.db}`;

export class EventHub {
  private readonly listeners = new Set<StoreEventListener>();
  private readonly buffered = new Map<string, StoreEvent>();
  private readonly maxBufferedEvents: number;
  private readonly onListenerError: (error: unknown, event: StoreEvent) => void;
  private available = true;
  droppedEvents = 0;
  /** Ring of recent delivered events; `logStartSeq` is the seq of `log[0]`. */
  private readonly log: StoreEvent[] = [];
  private logStartSeq = 1;
  private nextSeq = 1;
  private readonly maxLoggedEvents: number;
  private readonly resync: () => readonly StoreEvent[];
  /** Named subscriptions: the seq of the next event each has not seen. */
  private readonly positions = new Map<string, number>();

  constructor(options: EventHubOptions = {}) {
    this.maxBufferedEvents = options.maxBufferedEvents ?? 10_000;
    this.onListenerError = options.onListenerError ?? (() => {});
    this.maxLoggedEvents = options.maxLoggedEvents ?? 100_000;
    this.resync = options.resync ?? (() => []);
  }

  emit(event: StoreEvent): void {
    if (!this.available) {
      this.hold(event);
      return;
    }
    this.deliver(event);
  }

  setAvailable(available: boolean): void {
    this.available = available;
    if (!available) return;
    const held = [...this.buffered.values()];
    this.buffered.clear();
    for (const event of held) this.deliver(event);
  }

  isAvailable(): boolean {
    return this.available;
  }

  listenerCount(): number {
    return this.listeners.size;
  }

  /** A new, independent subscription (one per consumer); named ones resume (see the file comment). */
  createEventSource(options: EventSourceOptions = {}): EventSource {
    const name = options.name;
    let current: StoreEventListener | undefined;
    return {
      start: async (listener) => {
        if (current !== undefined) this.listeners.delete(current);
        if (name !== undefined) this.replay(name, listener);
        // Wrap so the same function given twice still counts as two subscriptions.
        const wrapped: StoreEventListener = (event) => {
          if (name !== undefined) this.positions.set(name, this.nextSeq);
          listener(event);
        };
        current = wrapped;
        this.listeners.add(wrapped);
      },
      stop: async () => {
        if (current !== undefined) this.listeners.delete(current);
        current = undefined;
        if (name !== undefined) this.positions.set(name, this.nextSeq);
      },
      status: (): EventSourceStatus =>
        this.available
          ? { mode: "push", connected: true }
          : { mode: "push", connected: false, detail: "store unavailable; events are held until it returns" },
    };
  }

  private hold(event: StoreEvent): void {
    const key = eventKey(event);
    // Re-inserting moves it last: the latest occurrence keeps the order of what happened.
    this.buffered.delete(key);
    this.buffered.set(key, event);
    while (this.buffered.size > this.maxBufferedEvents) {
      const oldest = this.buffered.keys().next();
      if (oldest.done === true) break;
      this.buffered.delete(oldest.value);
      this.droppedEvents++;
    }
  }

  /** Hand a named source what happened since its position (or a resync if that fell off the log). */
  private replay(name: string, listener: StoreEventListener): void {
    const from = this.positions.get(name);
    if (from === undefined) return; // first start: live from now, like `since=now`
    const missed = from < this.logStartSeq ? this.resync() : this.log.slice(from - this.logStartSeq);
    for (const event of missed) {
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error, event);
      }
    }
  }

  private deliver(event: StoreEvent): void {
    this.log.push(event);
    this.nextSeq++;
    if (this.log.length > this.maxLoggedEvents) {
      this.log.shift();
      this.logStartSeq++;
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error, event);
      }
    }
  }
}
