/**
 * The server's `[chttpd] max_db_number_for_dbs_info_req`, learnt from its
 * answers. A `POST /_dbs_info` of n keys refused as too_many_keys says the
 * limit is below n; one answered says it is at least n. Until a refusal, the
 * number upholster was configured with stands. After one, each batch asks
 * for the middle of what is still possible: a binary search spread over the
 * requests that go out anyway, each refused probe one request spent. It
 * settles on the exact limit after about log2(n) refusals, where halving
 * would stay up to 2x short (twice the requests) for good. Where the
 * server's config can be read (server-daemons.ts), it is told the limit
 * and nothing is refused.
 */
export type Refusal = "first" | "probe" | "fell";

export class DbsInfoLimit {
  /** The most keys the server answered (since its limit last fell). */
  private accepted = 0;
  /** The fewest keys it refused. */
  private refused = Infinity;
  /** What upholster was configured with: never asked for beyond. */
  private readonly configured: number;
  /** What the next request asks for. */
  keysPerRequest: number;

  constructor(configured: number) {
    this.configured = Math.max(1, Math.floor(configured));
    this.keysPerRequest = this.configured;
  }

  /** Whether the limit is known exactly (or nothing was ever refused). */
  get settled(): boolean {
    return this.refused === Infinity || this.refused - this.accepted <= 1;
  }

  /**
   * The server's config says its limit is `limit`: below what upholster was
   * configured with, that is the size from now on, known exactly (nothing
   * refused to learn it). At or above, the configured size again: upholster
   * never asks for more than it was configured with. The config is the
   * authority when read (a limit raised since a refusal counts); one lowered
   * later is still found by refusals.
   */
  told(limit: number): void {
    const keys = Math.max(1, Math.floor(limit));
    if (keys >= this.configured) {
      this.accepted = 0;
      this.refused = Infinity;
      this.keysPerRequest = this.configured;
      return;
    }
    this.accepted = keys;
    this.refused = keys + 1;
    this.retarget();
  }

  /** The server answered a request of `keys` keys. */
  accept(keys: number): void {
    if (keys <= this.accepted) return;
    this.accepted = keys;
    this.retarget();
  }

  /**
   * The server refused `keys` keys: the first refusal, a probe of the
   * search, or a limit that fell below what it once took (an operator
   * lowered it while upholster ran: what it took before no longer holds).
   */
  refuse(keys: number): Refusal {
    const refusal: Refusal = this.refused === Infinity ? "first" : keys <= this.accepted ? "fell" : "probe";
    if (keys <= this.accepted) this.accepted = 0;
    this.refused = Math.min(this.refused, keys);
    this.retarget();
    return refusal;
  }

  private retarget(): void {
    if (this.refused === Infinity) return;
    this.keysPerRequest = this.settled ? Math.max(1, this.accepted) : Math.max(1, Math.floor((this.accepted + this.refused) / 2));
  }
}
