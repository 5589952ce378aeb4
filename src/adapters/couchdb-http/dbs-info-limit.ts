/**
 * The server's `[chttpd] max_db_number_for_dbs_info_req`, learnt from its
 * answers. A `POST /_dbs_info` of n keys refused as too_many_keys says the
 * limit is below n; one answered says it is at least n. Until a refusal, the
 * number upholster was configured with stands. After one, each batch asks
 * for the middle of what is still possible: a binary search spread over the
 * requests that go out anyway, each refused probe one request spent. It
 * settles on the exact limit after about log2(n) refusals, where halving
 * would stay up to 2x short (twice the requests) for good.
 */
export type Refusal = "first" | "probe" | "fell";

export class DbsInfoLimit {
  /** The most keys the server answered (since its limit last fell). */
  private accepted = 0;
  /** The fewest keys it refused. */
  private refused = Infinity;
  /** What the next request asks for. */
  keysPerRequest: number;

  constructor(configured: number) {
    this.keysPerRequest = Math.max(1, Math.floor(configured));
  }

  /** Whether the limit is known exactly (or nothing was ever refused). */
  get settled(): boolean {
    return this.refused === Infinity || this.refused - this.accepted <= 1;
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
