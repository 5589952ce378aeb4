/**
 * One streaming client. Headers go out with the first write (CouchDB's
 * longpoll/continuous send nothing until there is something to say). Writes
 * respect backpressure: the feed loop awaits `drain` before reading more, so
 * a slow client only lags (it never makes us buffer the feed); a client whose
 * unsent output passes `maxBufferBytes`, or that does not drain within
 * `drainTimeoutMs`, is disconnected. `signal` aborts when the client is gone.
 */
import type { ServerResponse } from "node:http";
import type { CancelTimer, Timers } from "../../ports/shell.js";

export class ClientStream {
  private readonly abort = new AbortController();
  private headersSent = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly headers: Record<string, string>,
    private readonly maxBufferBytes: number,
    private readonly timers: Timers,
    private readonly drainTimeoutMs: number,
    private readonly onKill: (reason: string) => void = () => undefined,
  ) {
    res.on("close", () => this.abort.abort());
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get closed(): boolean {
    return this.abort.signal.aborted;
  }

  /** Sends the headers now (eventsource: clients expect them at once). */
  open(): void {
    if (this.headersSent || this.closed) return;
    this.headersSent = true;
    this.res.writeHead(200, this.headers);
    this.res.flushHeaders();
  }

  /** Writes and waits until the client has taken it (or is gone). */
  async write(text: string): Promise<void> {
    if (this.closed) return;
    this.open();
    const flushed = this.res.write(text);
    if (this.res.writableLength > this.maxBufferBytes) return this.kill(`more than ${this.maxBufferBytes} bytes unsent`);
    if (!flushed) await this.drain();
  }

  end(text = ""): void {
    if (this.closed) return;
    this.open();
    this.res.end(text);
  }

  kill(reason: string): void {
    if (!this.closed) this.onKill(reason);
    this.res.destroy();
    this.abort.abort();
  }

  private drain(): Promise<void> {
    return new Promise<void>((resolve) => {
      const cancel: CancelTimer = this.timers.setTimeout(() => {
        this.kill(`took nothing for ${this.drainTimeoutMs} ms`);
        done();
      }, this.drainTimeoutMs);
      const done = () => {
        cancel();
        this.res.off("drain", done);
        this.abort.signal.removeEventListener("abort", done);
        resolve();
      };
      this.res.once("drain", done);
      this.abort.signal.addEventListener("abort", done);
    });
  }
}
