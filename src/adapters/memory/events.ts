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
 *
 * Where events were lost (the held buffer overflowed, or a resync stood in
 * for a replay), `source-resumed` follows, so consumers that need every db
 * event (the db updates feed) reconcile with the db list.
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
  "ddoc" in event ? `${event.type}\u0000${event.db}\u0000${event.ddoc}` : `${event.type}\u0000${event.db ?? ""}`;

export class EventHub {
  private readonly listeners = new Set<StoreEventListener>();
  /**
   * The listeners as an array, replaced (never changed in place) when one
   * comes or goes: a delivery iterates the array of when it began, as a copy
   * per event did, without the copy (one per write).
   */
  private listenerList: readonly StoreEventListener[] = [];
  private readonly buffered = new Map<string, StoreEvent>();
  private readonly maxBufferedEvents: number;
  private readonly onListenerError: (error: unknown, event: StoreEvent) => void;
  private available = true;
  droppedEvents = 0;
  /** `droppedEvents` when the store last became unavailable: more on return means a gap to announce. */
  private droppedBeforeOutage = 0;
  private emittedCount = 0;
  /**
   * Ring of the last `maxLoggedEvents` delivered events: the event of seq `s`
   * sits at `log[s % maxLoggedEvents]` while `s >= logStartSeq`. (An array
   * trimmed with shift() cost O(n) per event once full: 75% of bench:simulate.)
   */
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

  /** Events emitted so far (held ones too): a change counter, e.g. for caches of the db list. */
  get emitted(): number {
    return this.emittedCount;
  }

  emit(event: StoreEvent): void {
    this.emittedCount++;
    if (!this.available) {
      this.hold(event);
      return;
    }
    this.deliver(event);
  }

  setAvailable(available: boolean): void {
    if (!available && this.available) this.droppedBeforeOutage = this.droppedEvents;
    this.available = available;
    if (!available) return;
    const held = [...this.buffered.values()];
    this.buffered.clear();
    for (const event of held) this.deliver(event);
    const lost = this.droppedEvents - this.droppedBeforeOutage;
    this.droppedBeforeOutage = this.droppedEvents;
    if (lost > 0) this.deliver({ type: "source-resumed", reason: `${lost} events dropped while the store was unavailable` });
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
        if (current !== undefined) this.unsubscribe(current);
        if (name !== undefined) this.replay(name, listener);
        // Wrap so the same function given twice still counts as two subscriptions.
        const wrapped: StoreEventListener = (event) => {
          if (name !== undefined) this.positions.set(name, this.nextSeq);
          listener(event);
        };
        current = wrapped;
        this.subscribe(wrapped);
      },
      stop: async () => {
        if (current !== undefined) this.unsubscribe(current);
        current = undefined;
        if (name !== undefined) this.positions.set(name, this.nextSeq);
      },
      status: (): EventSourceStatus =>
        this.available
          ? { mode: "push", connected: true }
          : { mode: "push", connected: false, detail: "store unavailable; events are held until it returns" },
    };
  }

  private subscribe(listener: StoreEventListener): void {
    this.listeners.add(listener);
    this.listenerList = [...this.listeners];
  }

  private unsubscribe(listener: StoreEventListener): void {
    if (this.listeners.delete(listener)) this.listenerList = [...this.listeners];
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
    const resync = from < this.logStartSeq;
    const missed: readonly StoreEvent[] = resync
      ? [...this.resync(), { type: "source-resumed", reason: "the replay log no longer reaches back to where this source stopped" }]
      : this.logged(from);
    for (const event of missed) {
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error, event);
      }
    }
  }

  /** Logged events from seq `from` on, oldest first. */
  private logged(from: number): StoreEvent[] {
    const out: StoreEvent[] = [];
    for (let seq = Math.max(from, this.logStartSeq); seq < this.nextSeq; seq++) out.push(this.log[seq % this.maxLoggedEvents]!);
    return out;
  }

  private deliver(event: StoreEvent): void {
    this.log[this.nextSeq % this.maxLoggedEvents] = event;
    this.nextSeq++;
    if (this.nextSeq - this.logStartSeq > this.maxLoggedEvents) this.logStartSeq++;
    for (const listener of this.listenerList) {
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error, event);
      }
    }
  }
}
