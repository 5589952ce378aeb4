/**
 * The store's running byte totals: every db file and view index file adds
 * each change of its sizes here as it happens, so `store.totals()` costs
 * O(1). A simulation samples the totals every simulated minute over 10,000
 * dbs, and a pass over all of them was 2.4% of bench:simulate's time.
 *
 * A file that leaves the store (db deleted, stale index cleaned up) takes
 * its bytes out and is detached: changes it makes afterwards (a pass or a
 * job still finishing on it) no longer count.
 */
export interface ByteTotals {
  readonly dbFileBytes: number;
  readonly dbActiveBytes: number;
  readonly viewFileBytes: number;
  readonly viewActiveBytes: number;
  /** Every byte writes ever appended to db files (compactions aside): the churn's cost, for write amplification. */
  readonly dbAppendedBytes: number;
}

export class ByteLedger implements ByteTotals {
  dbFileBytes = 0;
  dbActiveBytes = 0;
  viewFileBytes = 0;
  viewActiveBytes = 0;
  dbAppendedBytes = 0;

  snapshot(): ByteTotals {
    return {
      dbFileBytes: this.dbFileBytes,
      dbActiveBytes: this.dbActiveBytes,
      viewFileBytes: this.viewFileBytes,
      viewActiveBytes: this.viewActiveBytes,
      dbAppendedBytes: this.dbAppendedBytes,
    };
  }
}

/** Where a detached file's changes go: nowhere anyone reads. */
export const detachedLedger = (): ByteLedger => new ByteLedger();
