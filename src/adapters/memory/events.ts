/**
 * The memory store's event hub: every write is announced, synchronously, to
 * every started event source (several subsystems listen at once). While the
 * store is marked unavailable, events are held in a bounded, de-duplicating
 * buffer and delivered when it comes back, as a reconnecting feed would.
 */
import type { EventSource, EventSourceStatus, StoreEvent, StoreEventListener } from "../../ports/events.js";

export interface EventHubOptions {
  /** Events held while unavailable; beyond this the oldest are dropped (counted in `droppedEvents`). */
  readonly maxBufferedEvents?: number;
  /** Errors thrown by listeners: never allowed to fail the write that emitted. */
  readonly onListenerError?: (error: unknown, event: StoreEvent) => void;
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

  constructor(options: EventHubOptions = {}) {
    this.maxBufferedEvents = options.maxBufferedEvents ?? 10_000;
    this.onListenerError = options.onListenerError ?? (() => {});
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

  /** A new, independent subscription (one per consumer). */
  createEventSource(): EventSource {
    let current: StoreEventListener | undefined;
    return {
      start: async (listener) => {
        if (current !== undefined) this.listeners.delete(current);
        // Wrap so the same function given twice still counts as two subscriptions.
        const wrapped: StoreEventListener = (event) => listener(event);
        current = wrapped;
        this.listeners.add(wrapped);
      },
      stop: async () => {
        if (current !== undefined) this.listeners.delete(current);
        current = undefined;
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

  private deliver(event: StoreEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error, event);
      }
    }
  }
}
