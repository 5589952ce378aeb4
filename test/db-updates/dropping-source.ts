/** A store's event source that swallows every event while `dropping` (as a restarting source loses what it buffered); `resume()` ends the gap and says so. */
import type { EventSource, StoreEvent } from "../../src/ports/events.js";

export class DroppingSource {
  dropping = false;
  dropped = 0;
  private listener: ((e: StoreEvent) => void) | undefined;

  constructor(private readonly inner: EventSource) {}

  async start(listener: (e: StoreEvent) => void): Promise<void> {
    this.listener = listener;
    await this.inner.start((event) => {
      if (this.dropping) this.dropped++;
      else listener(event);
    });
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }

  resume(reason = "reconnected after a restart"): void {
    this.dropping = false;
    this.listener?.({ type: "source-resumed", reason });
  }
}
