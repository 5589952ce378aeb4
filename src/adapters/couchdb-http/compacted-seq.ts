/**
 * The numeric update seq of each db at its last compaction, kept by the
 * adapter: clustered `GET /{db}` has no `compacted_seq` (only shard info does),
 * and smoosh's `min_changes` needs it. Persisted through the StatePort so a
 * restart does not forget it; bounded so a server with churning dbs cannot grow
 * it without limit (the oldest entries go first).
 */
import * as t from "io-ts";
import { isLeft } from "fp-ts/lib/Either.js";
import type { Logger, StatePort } from "../../ports/shell.js";
import { describeErrors } from "./decoders.js";

export const COMPACTED_SEQS_KEY = "couchdb-http.compacted-seqs";
export const maxCompactedSeqEntries = 100_000;

const Persisted = t.type({ version: t.literal(1), seqs: t.record(t.string, t.number) }, "CompactedSeqs");

export class CompactedSeqs {
  private readonly seqs = new Map<string, number>();
  private loaded: Promise<void> | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly state: StatePort | undefined,
    private readonly logger: Logger,
    private readonly maxEntries = maxCompactedSeqEntries,
  ) {}

  /** Load once; a bad or unreadable value is logged and ignored (start empty, never crash). */
  load(): Promise<void> {
    this.loaded ??= (async () => {
      if (this.state === undefined) return;
      try {
        const raw = await this.state.load(COMPACTED_SEQS_KEY);
        if (raw === undefined) return;
        const decoded = Persisted.decode(raw);
        if (isLeft(decoded)) {
          this.logger.warn({ key: COMPACTED_SEQS_KEY, problems: describeErrors(decoded.left).slice(0, 3) }, "ignoring saved compacted seqs");
          return;
        }
        for (const [db, seq] of Object.entries(decoded.right.seqs)) this.seqs.set(db, seq);
      } catch (e) {
        this.logger.warn({ key: COMPACTED_SEQS_KEY, error: String(e) }, "could not load saved compacted seqs");
      }
    })();
    return this.loaded;
  }

  get(db: string): number | undefined {
    return this.seqs.get(db);
  }

  async record(db: string, seq: number): Promise<void> {
    await this.load();
    this.seqs.delete(db);
    this.seqs.set(db, seq);
    while (this.seqs.size > this.maxEntries) {
      const oldest = this.seqs.keys().next().value;
      if (oldest === undefined) break;
      this.seqs.delete(oldest);
    }
    await this.persist();
  }

  async forget(db: string): Promise<void> {
    await this.load();
    if (this.seqs.delete(db)) await this.persist();
  }

  private persist(): Promise<void> {
    const state = this.state;
    if (state === undefined) return Promise.resolve();
    // Serialise saves so an older snapshot never lands after a newer one.
    this.saving = this.saving.then(() =>
      state.save(COMPACTED_SEQS_KEY, { version: 1, seqs: Object.fromEntries(this.seqs) }).catch((e: unknown) => {
        this.logger.warn({ key: COMPACTED_SEQS_KEY, error: String(e) }, "could not save compacted seqs");
      }),
    );
    return this.saving;
  }
}
